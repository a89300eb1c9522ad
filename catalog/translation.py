from modeltranslation.translator import TranslationOptions, register

from catalog.models import AdviceSection, Alternative, Environment, GpuModel


@register(GpuModel)
class GpuModelTranslation(TranslationOptions):
    fields = ("tagline", "summary")


@register(AdviceSection)
class AdviceSectionTranslation(TranslationOptions):
    fields = ("title", "body")


@register(Alternative)
class AlternativeTranslation(TranslationOptions):
    fields = ("reason",)


@register(Environment)
class EnvironmentTranslation(TranslationOptions):
    fields = ("name", "description")
