from django.core.management.base import BaseCommand

from catalog.models import GpuModel
from catalog.services import catalog_seed


class Command(BaseCommand):
    help = (
        "Loads the seven GPUs, their prices and advice, and the two environments. "
        "Safe to run again: specifications and texts are refreshed from catalog/seed_data.py, "
        "stock, on-sale flags and prices edited by staff are kept. With --if-empty it does "
        "nothing once the catalog holds a GPU (what deployments run on every start)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="Only seed a catalog without any GPU; never touch one staff already edit.",
        )

    def handle(self, *args, if_empty, **options):
        if if_empty and GpuModel.objects.exists():
            self.stdout.write("The catalog already has GPUs: left as it is.")
            return
        report = catalog_seed()
        self.stdout.write(
            f"Catalog seeded: {report.gpus_created} GPU(s), "
            f"{report.prices_created} price(s), "
            f"{report.environments_created} environment(s) created."
        )
