from urllib.parse import urlsplit

from django.conf import settings
from django.db import migrations


def name_the_site(apps, schema_editor):
    """allauth's e-mails greet "from <site name>": the store, not example.com."""
    Site = apps.get_model("sites", "Site")
    Site.objects.update_or_create(
        pk=settings.SITE_ID,
        defaults={"name": settings.STORE_NAME, "domain": urlsplit(settings.SITE_URL).netloc},
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_apikey"),
        ("sites", "0002_alter_domain_unique"),
    ]

    operations = [migrations.RunPython(name_the_site, migrations.RunPython.noop)]
