"""SSH keys: the public keys an account's rentals install, as on the account's SSH keys page."""

from django.http import Http404
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from accounts.selectors import ssh_keys_for_user
from accounts.services import MAX_SSH_KEYS_PER_USER, ssh_key_add, ssh_key_delete
from accounts.ssh_keys import MIN_RSA_BITS, SshKeyRefused
from api.errors import FieldError
from api.views.base import ApiView

# Refusals about the account's keys rather than the key sent: 409, like the other limits.
CONFLICTS = {"duplicate": "ssh_key_exists", "too_many": "too_many_ssh_keys"}
KEY_EXAMPLE = {
    "id": 12,
    "name": "Laptop",
    "public_key": (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO5dwIWOZ99czT6dWV0A36NLzEbkC1xecSTImEhwARpg "
        "ada@laptop"
    ),
    "fingerprint": "SHA256:vaYZharlQKXtY4lfrOcGQ4pBsLueaqFa4nlL3hIXhyE",
    "created_at": "2025-03-04T10:00:00+01:00",
}


class SshKeyOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    public_key = serializers.CharField(
        help_text='OpenSSH one-line form, as installed: "type base64 comment".'
    )
    fingerprint = serializers.CharField(help_text="As `ssh-keygen -lf` prints it: `SHA256:...`.")
    created_at = serializers.DateTimeField()

    class Meta:
        ref_name = "SshKey"


def _refused(refusal: SshKeyRefused) -> FieldError:
    conflict = CONFLICTS.get(refusal.code)
    return FieldError(
        refusal.message,
        field="public_key",
        code=conflict or refusal.code,
        status_code=409 if conflict else 400,
    )


# A private key pasted by mistake stays out of error reports.
@method_decorator(sensitive_post_parameters("public_key"), name="dispatch")
class SshKeyListApi(ApiView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(
            max_length=80,
            required=False,
            allow_blank=True,
            default="",
            help_text="To tell your keys apart; the key's comment when empty.",
        )
        # Blank reaches the parser, whose refusal says how to make a key (`empty_key`).
        public_key = serializers.CharField(
            allow_blank=True,
            trim_whitespace=False,
            help_text=(
                f"One line of a .pub file: ed25519, ECDSA, or RSA of at least {MIN_RSA_BITS} bits."
            ),
        )

        class Meta:
            ref_name = "SshKeyCreate"

    @extend_schema(
        operation_id="ssh_keys_list",
        summary="List your SSH keys",
        description=(
            "The public keys of your account, oldest first. An order installs the keys it "
            "names (`ssh_keys` of `POST /orders/`, all of them by default)."
        ),
        responses=SshKeyOutputSerializer(many=True),
        examples=[OpenApiExample("Key", value=[KEY_EXAMPLE], response_only=True)],
        tags=["ssh-keys"],
    )
    def get(self, request):
        keys = ssh_keys_for_user(user=request.user)
        return Response(SshKeyOutputSerializer(keys, many=True).data)

    @extend_schema(
        operation_id="ssh_keys_create",
        summary="Add an SSH key",
        description=(
            "Adds a public key to your account. Refused with 400 and a code saying why: "
            "`empty_key`, `private_key` (a private key is never stored), `not_a_key`, `one_line`, "
            "`unsupported_type`, `damaged`, `rsa_too_short`; with 409: `ssh_key_exists` "
            f"and `too_many_ssh_keys` (at most {MAX_SSH_KEYS_PER_USER} keys per account)."
        ),
        request=InputSerializer,
        responses={201: SshKeyOutputSerializer},
        examples=[
            OpenApiExample(
                "A laptop's key",
                value={"name": "Laptop", "public_key": KEY_EXAMPLE["public_key"]},
                request_only=True,
            ),
            OpenApiExample("Key", value=KEY_EXAMPLE, response_only=True, status_codes=["201"]),
        ],
        tags=["ssh-keys"],
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            ssh_key = ssh_key_add(user=request.user, **serializer.validated_data)
        except SshKeyRefused as refusal:
            raise _refused(refusal) from None
        return Response(SshKeyOutputSerializer(ssh_key).data, status=status.HTTP_201_CREATED)


class SshKeyDetailApi(ApiView):
    @extend_schema(
        operation_id="ssh_keys_destroy",
        summary="Delete an SSH key",
        description=(
            "Removes the key from your account and from your orders: machines not yet handed "
            "over will not install it."
        ),
        responses={204: OpenApiResponse(description="Deleted.")},
        tags=["ssh-keys"],
    )
    def delete(self, request, key_id: int):
        ssh_key = ssh_keys_for_user(user=request.user).filter(pk=key_id).first()
        if ssh_key is None:
            raise Http404
        ssh_key_delete(ssh_key=ssh_key)
        return Response(status=status.HTTP_204_NO_CONTENT)
