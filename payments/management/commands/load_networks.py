"""Load the production network presets (payments/presets.py); safe to run again."""

from django.core.management.base import BaseCommand, CommandError

from payments.networks import ActivationRefused, chain_activate, network_preset_load
from payments.presets import PRESETS


class Command(BaseCommand):
    help = (
        "Create or update the network presets (all, or those named), then activate each one "
        "whose RPC URL variable is set and whose node answers the expected chain and tokens."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", metavar="NAME", help=", ".join(PRESETS))

    def handle(self, *args, names, **options):
        unknown = sorted(set(names) - set(PRESETS))
        if unknown:
            raise CommandError(
                f"Unknown network(s): {', '.join(unknown)}. Known: {', '.join(PRESETS)}."
            )
        refused = 0
        for name in names or PRESETS:
            chain = network_preset_load(preset=PRESETS[name])
            try:
                chain_activate(chain=chain)
            except ActivationRefused as exc:
                refused += 1
                self.stdout.write(self.style.WARNING(f"{name}: loaded, inactive: {exc}"))
            else:
                self.stdout.write(self.style.SUCCESS(f"{name}: loaded and active ({chain})"))
        if refused:
            self.stdout.write(f"{refused} network(s) left inactive.")
