import factory

from accounts.models import User


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"customer{n}@example.com")
    first_name = factory.Faker("first_name")
    last_name = factory.Faker("last_name")
    language = "fr"
    password = factory.PostGenerationMethodCall("set_password", "correct-Horse-battery-9")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()
