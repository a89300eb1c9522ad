from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hosts.local import (
    SSHD,
    LocalHostRefused,
    docker_answers,
    local_host_directory,
    local_host_prepare,
    local_image_build,
    pytorch_environment_localise,
    seeded_hosts_localise,
)
from rental.console import SHARED_MODE_NOTICE


class Command(BaseCommand):
    help = (
        "Prepares the GPU host of a development machine (`make run`): the local sshd's keys "
        "and config under var/ssh, and the seeded hosts pointed at it (provisioning `ssh`). "
        "The Procfile's `sshd` process then serves it on 127.0.0.1."
    )

    def handle(self, *args, **options):
        port = settings.LOCAL_GPU_HOST_PORT
        if not port:
            raise CommandError("LOCAL_GPU_HOST_PORT is not set: only `make run` has a local host.")
        directory = local_host_directory()
        containers = docker_answers()
        if containers:
            self.stdout.write(
                "Docker answers: rentals run in containers. The pytorch image is built the "
                "first time (a few minutes), then loaded from its cache."
            )
            image = local_image_build()
            pytorch_environment_localise(image)
            mode = f"containers of {image['image']} (PyTorch {image['pytorch']}, no GPU)"
        else:
            mode = "the shared mode (their own account when run by root, never root; else yours)"
        try:
            config = local_host_prepare(directory=directory, port=port, containers=containers)
        except LocalHostRefused as refusal:
            # sshd would refuse every login without a word on the console: say it here.
            raise CommandError(
                f"The local GPU host cannot keep its keys in {directory}: {refusal}, so another "
                "user could replace them. Clone the project into a folder only you can write "
                "to (under your home, say), or set LOCAGPU_VAR_DIR to one."
            ) from refusal
        moved = seeded_hosts_localise(port=port)
        self.stdout.write(
            f"Local GPU host on 127.0.0.1:{port} ({moved} seeded host(s) pointed at it), "
            f"rentals in {mode}; started by: {SSHD} -D -e -f {config}"
        )
        if not containers:
            self.stdout.write(self.style.WARNING(SHARED_MODE_NOTICE))
