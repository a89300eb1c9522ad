"""Follow each active chain's new heads over WebSocket and scan on each (payments.watcher.heads)."""

import asyncio
import contextlib
import time

from django.core.management.base import BaseCommand, CommandError

from payments.models import Chain
from payments.watcher.heads import HeadFollower, heads_follow

NO_CHAIN_WAIT_SECONDS = 5


class Command(BaseCommand):
    help = "Scan each active chain on every new block (eth_subscribe newHeads); runs until stopped."

    def add_arguments(self, parser):
        parser.add_argument("--chain", type=int, help="only this chain id")
        parser.add_argument(
            "--ws-url", help="WebSocket URL, when it is not the RPC URL's (needs --chain)"
        )

    def handle(self, *args, chain=None, ws_url=None, **options):
        chains = Chain.objects.filter(is_active=True).order_by("pk")
        if chain is not None:
            chains = chains.filter(chain_id=chain)
        elif ws_url:
            raise CommandError("--ws-url names one chain's socket: give --chain too.")
        # `make run` starts this beside the devnet it registers: wait for a chain rather than
        # exit (honcho would stop every process with it).
        while not (followers := [HeadFollower(c, ws_url=ws_url) for c in chains.all()]):
            time.sleep(NO_CHAIN_WAIT_SECONDS)
        for follower in followers:
            self.stdout.write(f"Following {follower.name} at {follower.ws_url}")
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(heads_follow(followers))
