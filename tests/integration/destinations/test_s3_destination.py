"""A bucket destination on moto's S3 server, checking signatures: the probe and transfers."""

from __future__ import annotations

import pytest

from app import destinations
from app.models.package_delivery import FailureClass
from tests import factories
from tests.fixtures.s3 import BUCKET


def test_probe_succeeds_and_leaves_nothing_behind(world, s3_destination, s3_account):
    destination = s3_destination(world.workspace, path="exports/rhythm")

    result = destinations.test_connection(destination)

    assert result.ok, result.message
    assert f"s3://{BUCKET}/exports/rhythm" in result.message
    assert s3_account.client.list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0


def test_probe_with_a_wrong_secret_shows_the_signature_error_without_the_secret(world, s3_destination):
    wrong_secret = "wrong-secret-0123456789abcdefghijklmnop"
    destination = s3_destination(world.workspace, secret=wrong_secret)

    result = destinations.test_connection(destination)

    assert not result.ok
    assert result.message.startswith("SignatureDoesNotMatch: ")
    assert wrong_secret not in result.message


def test_probe_with_an_unknown_access_key_shows_the_store_error(world, s3_destination):
    destination = s3_destination(world.workspace, access_key_id="AKIAUNKNOWNKEY000000")

    result = destinations.test_connection(destination)

    assert not result.ok
    assert result.message.startswith("InvalidAccessKeyId: ")


def test_probe_with_credentials_allowed_nothing_shows_access_denied(world, s3_destination, s3_account):
    destination = s3_destination(
        world.workspace, access_key_id=s3_account.denied_access_key_id, secret=s3_account.denied_secret
    )

    result = destinations.test_connection(destination)

    assert not result.ok
    assert result.message.startswith("AccessDenied: ")
    assert s3_account.denied_secret not in result.message


def test_probe_of_a_missing_bucket_shows_no_such_bucket(world, s3_destination):
    destination = s3_destination(world.workspace, bucket="no-such-bucket-here")

    result = destinations.test_connection(destination)

    assert not result.ok
    assert result.message.startswith("NoSuchBucket: ")


def test_probe_of_an_endpoint_with_nothing_listening_says_the_connection_failed(world, s3_destination, free_port):
    destination = s3_destination(world.workspace, endpoint_url=f"http://127.0.0.1:{free_port}")

    result = destinations.test_connection(destination)

    assert not result.ok
    assert result.message.startswith("The endpoint refused the connection")


def test_probe_with_a_secret_encrypted_under_another_key_asks_for_the_secret_again(world, s3_destination):
    from app.security.credentials import encrypt_secret

    destination = s3_destination(world.workspace)
    destination.secret_ciphertext = encrypt_secret("whatever", key="another-servers-key")

    result = destinations.test_connection(destination)

    assert not result.ok
    assert "enter the secret again" in result.message


def test_probe_failing_unexpectedly_logs_the_details_it_sends_people_to_under_the_destination(
    world, s3_destination, caplog
):
    # Saved before endpoints with %-escapes were refused: boto3 refuses to make a client for it.
    destination = s3_destination(world.workspace, endpoint_url="http://127%2e0%2e0%2e1:5127")

    result = destinations.test_connection(destination)

    assert (result.ok, result.message) == (False, destinations.UNEXPECTED_ERROR)
    logged = [record for record in caplog.records if f"export_destination {destination.id}" in record.getMessage()]
    assert len(logged) == 1
    assert logged[0].exc_info is not None and "Invalid endpoint" in str(logged[0].exc_info[1])


def test_large_object_is_uploaded_in_parts_and_arrives_whole(world, s3_destination, s3_account, app):
    destination = s3_destination(world.workspace, path="drop")
    part_size = app.config["SETTINGS"].storage_part_size
    chunks = [bytes([n % 251]) * 10_000 for n in range(2 * part_size // 10_000 + 3)]

    size = destinations.open_destination(destination).put_stream("w1/big.bin", iter(chunks))

    stored = s3_account.client.get_object(Bucket=BUCKET, Key="drop/w1/big.bin")
    assert size == sum(len(c) for c in chunks)
    assert stored["Body"].read() == b"".join(chunks)
    assert "-" in stored["ETag"]  # a multipart object's ETag names its part count
    assert s3_account.client.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []


def test_a_stream_that_fails_midway_leaves_no_unfinished_upload(world, s3_destination, s3_account, app):
    destination = s3_destination(world.workspace)
    part_size = app.config["SETTINGS"].storage_part_size

    def failing_chunks():
        yield b"x" * (part_size + 1)
        raise OSError("source read failed")

    store = destinations.open_destination(destination)
    with pytest.raises(OSError):
        store.put_stream("broken.bin", failing_chunks())
    assert s3_account.client.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []
    assert s3_account.client.list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0


def test_wrong_credentials_are_a_permanent_failure(world, s3_destination):
    destination = s3_destination(world.workspace, secret="not-the-secret")

    try:
        destinations.open_destination(destination).put_bytes("x.bin", b"x")
    except Exception as exc:  # the store's own exception, whatever its class
        failure = destinations.classify_error(exc)
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "SignatureDoesNotMatch")


def test_missing_bucket_is_a_permanent_failure(world, s3_destination):
    destination = s3_destination(world.workspace, bucket="no-such-bucket-here")

    try:
        destinations.open_destination(destination).put_bytes("x.bin", b"x")
    except Exception as exc:
        failure = destinations.classify_error(exc)
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "NoSuchBucket")


def test_endpoint_with_nothing_listening_is_a_transient_failure(world, s3_destination, free_port):
    destination = s3_destination(world.workspace, endpoint_url=f"http://127.0.0.1:{free_port}")

    try:
        destinations.open_destination(destination).put_bytes("x.bin", b"x")
    except Exception as exc:
        failure = destinations.classify_error(exc)
    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT, "connection_failed")
    assert "refused the connection" in failure.summary


def test_destination_factory_default_is_not_reachable_without_a_root(world, app):
    destination = factories.make_destination(world.workspace)

    result = destinations.test_connection(destination)

    assert not result.ok
    assert "DESTINATIONS_ROOT" in result.message
