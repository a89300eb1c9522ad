from django.core.management.base import BaseCommand

from catalog.services import catalog_seed


class Command(BaseCommand):
    help = (
        "Loads the seven GPUs, their prices and advice, and the two environments. "
        "Safe to run again: specifications and texts are refreshed from catalog/seed_data.py, "
        "stock, on-sale flags and prices edited by staff are kept."
    )

    def handle(self, *args, **options):
        report = catalog_seed()
        self.stdout.write(
            f"Catalog seeded: {report.gpus_created} GPU(s), "
            f"{report.prices_created} price(s), "
            f"{report.environments_created} environment(s) created."
        )
