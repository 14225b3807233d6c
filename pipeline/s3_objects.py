"""S3 objects read, written and deleted through one boto3 client, with the endpoint, region and
credentials that Beam's S3 options give (`pipeline.fileio` keeps one client per process and
chooses between these and Beam's filesystems)."""

from __future__ import annotations

import contextlib
import errno
import io


def settings_of(options) -> dict:
    """boto3 client arguments from Beam's S3 options, as Beam's own S3 filesystem makes its clients
    (so the same endpoint, region and credentials, from the options or the AWS environment)."""
    from apache_beam.options.pipeline_options import S3Options

    s3 = options.view_as(S3Options)
    return {
        "region_name": s3.s3_region_name,
        "endpoint_url": s3.s3_endpoint_url,
        "use_ssl": not s3.s3_disable_ssl,
        "verify": s3.s3_verify,
        "aws_access_key_id": s3.s3_access_key_id,
        "aws_secret_access_key": s3.s3_secret_access_key,
        "aws_session_token": s3.s3_session_token,
    }


class S3SettingsError(ValueError):
    """S3 options a client cannot be made with (a key id without its secret)."""


def new_client(settings: dict, config=None):
    """A boto3 S3 client with these settings (`settings_of`); S3SettingsError when they are incomplete."""
    import boto3
    from botocore.exceptions import BotoCoreError

    try:
        return boto3.session.Session().client("s3", **settings, config=config)
    except BotoCoreError as error:  # before, a PartialCredentialsError traceback
        raise S3SettingsError(
            f"the S3 options: {error} (give --s3_access_key_id and --s3_secret_access_key together)"
        ) from None


def bucket_and_key(path: str) -> tuple[str, str]:
    """`s3://bucket/key/of/object` → ("bucket", "key/of/object")."""
    bucket, _, key = path.removeprefix("s3://").partition("/")
    return bucket, key


def object_size(client, path: str) -> int:
    """An S3 object's size (one HEAD request); FileNotFoundError when there is none."""
    from botocore.exceptions import ClientError

    bucket, key = bucket_and_key(path)
    try:
        return client.head_object(Bucket=bucket, Key=key)["ContentLength"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
            raise FileNotFoundError(errno.ENOENT, "no such object", path) from None
        raise


class S3Object(io.RawIOBase):
    """One S3 object as a seekable file: each read is one ranged GET."""

    def __init__(self, client, path: str) -> None:
        super().__init__()
        self.client, self.pos = client, 0
        self.bucket, self.key = bucket_and_key(path)
        self.size = object_size(client, path)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self.pos = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence] + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buffer) -> int:
        end = min(self.size, self.pos + len(buffer))
        if end <= self.pos:
            return 0
        ranged = self.client.get_object(Bucket=self.bucket, Key=self.key, Range=f"bytes={self.pos}-{end - 1}")
        data = ranged["Body"].read()
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


class S3Upload(io.RawIOBase):
    """A new S3 object written as a file: one PUT when it is small, else a multipart upload of
    `PART_BYTES` parts (S3's smallest), so at most a part is held. Only `close` (or leaving a
    `with` block without an error) publishes it: after an error, or dropped unclosed (a failed
    bundle's spill file), the upload is discarded and no partial object appears."""

    PART_BYTES = 5 << 20

    def __init__(self, client, path: str) -> None:
        super().__init__()
        self.client, self.held, self.parts, self.upload_id = client, bytearray(), [], None
        self.bucket, self.key = bucket_and_key(path)

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.held += data
        while len(self.held) >= self.PART_BYTES:
            self._send_part(bytes(self.held[: self.PART_BYTES]))
            del self.held[: self.PART_BYTES]
        return memoryview(data).nbytes

    def _send_part(self, data: bytes) -> None:
        if self.upload_id is None:
            self.upload_id = self.client.create_multipart_upload(Bucket=self.bucket, Key=self.key)["UploadId"]
        number = len(self.parts) + 1
        sent = self.client.upload_part(
            Bucket=self.bucket, Key=self.key, UploadId=self.upload_id, PartNumber=number, Body=data
        )
        self.parts.append({"PartNumber": number, "ETag": sent["ETag"]})

    def close(self) -> None:
        if self.closed:
            return
        if self.upload_id is None:
            self.client.put_object(Bucket=self.bucket, Key=self.key, Body=bytes(self.held))
        else:
            if self.held:
                self._send_part(bytes(self.held))
            self.client.complete_multipart_upload(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self.upload_id,
                MultipartUpload={"Parts": self.parts},
            )
        self.held = bytearray()
        super().close()

    def discard(self) -> None:
        """Close without publishing (aborting a multipart upload begun); nothing once closed, so an
        error raised after an explicit `close` in a `with` block is not masked by a failed abort."""
        if self.closed:
            return
        if self.upload_id is not None:
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id)
        self.held = bytearray()
        super().close()

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None:
            self.close()
        else:
            self.discard()

    def __del__(self) -> None:
        # io's own finalizer would `close`, publishing whatever a dropped writer held.
        if not self.closed:
            with contextlib.suppress(Exception):
                self.discard()


def delete_objects(client, paths: list[str]) -> None:
    """S3 objects deleted by batch requests of up to 1,000 keys per bucket (missing ones are fine)."""
    by_bucket = {}
    for path in paths:
        bucket, key = bucket_and_key(path)
        by_bucket.setdefault(bucket, []).append({"Key": key})
    for bucket, keys in by_bucket.items():
        for start in range(0, len(keys), 1000):
            answer = client.delete_objects(
                Bucket=bucket, Delete={"Objects": keys[start : start + 1000], "Quiet": True}
            )
            if answer.get("Errors"):
                first = answer["Errors"][0]
                raise OSError(
                    f"s3://{bucket}/{first['Key']}: not deleted ({first['Code']}: {first['Message']})"
                )


def move_object(client, source: str, destination: str) -> None:
    """Copy then delete (boto3's managed copy: one request, or a multipart copy above 8 MiB)."""
    source_bucket, source_key = bucket_and_key(source)
    bucket, key = bucket_and_key(destination)
    client.copy({"Bucket": source_bucket, "Key": source_key}, bucket, key)
    client.delete_object(Bucket=source_bucket, Key=source_key)
