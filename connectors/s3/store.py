"""The bucket, through boto3: uploads (single or multipart), listing and metadata for recovery.

boto3's own retries are off; each request is retried here ``s3.part.retries`` times with
jittered exponential backoff from ``s3.retry.backoff.ms``, and what still fails is told
apart: ``TransientStoreError`` (throttling, 5xx, lost connections: the task asks for
``put`` to be retried later and keeps running) or ``ConnectException`` (a missing bucket,
refused credentials: retrying cannot help, the task fails saying which key to fix).
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from connect.api import ConnectException
from connect.api.retry import backoff_seconds
from connectors.s3.config import S3SinkConfig
from connectors.s3.errors import TransientStoreError

log = logging.getLogger(__name__)

T = TypeVar("T")

_TRANSIENT_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalError",
        "ServiceUnavailable",
        "RequestLimitExceeded",
        "OperationAborted",
    }
)
_CREDENTIAL_CODES = frozenset(
    {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "403"}
)


def _send_body_whole(request: Any, **kwargs: Any) -> None:
    """botocore turns a bytes body into a file object (so a retry can rewind it), then
    hashes it 1 MB and sends it 128 KB at a time: a GIL hand-over at every step, each up to
    the switch interval long beside a busy task thread. Given back as the bytes (a
    BytesIO's getvalue() does not copy), the body is hashed and sent in one call each. Our
    retries build the request again, so nothing needs rewinding. On its own a 7.5 MB
    put_object to moto took 27 ms either way; beside a thread decoding JSON, 70 ms as a file
    object and 31 ms as bytes."""
    body = getattr(request, "data", None)
    if type(body) is io.BytesIO:
        request.data = body.getvalue()


class Store:
    def __init__(self, config: S3SinkConfig) -> None:
        self.config = config
        self.bucket = config.s3_bucket_name
        self.stopping = threading.Event()
        session = boto3.session.Session(
            aws_access_key_id=config.aws_access_key_id or None,
            aws_secret_access_key=config.secret(),
            region_name=config.s3_region,
        )
        self.client = session.client(
            "s3",
            endpoint_url=config.store_url or None,
            config=Config(
                retries={"total_max_attempts": 1, "mode": "standard"},  # we retry, with our backoff
                connect_timeout=10,
                read_timeout=60,
                s3={"addressing_style": "path"} if config.store_url else {},
                # S3-compatible stores differ on the newer default checksums; send them only
                # where an operation requires one.
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            ),
        )
        # Before signing: the payload's hash is computed while signing.
        self.client.meta.events.register("before-sign.s3.PutObject", _send_body_whole)
        self.client.meta.events.register("before-sign.s3.UploadPart", _send_body_whole)
        where = f" at {config.store_url}" if config.store_url else f" in {config.s3_region}"
        self.where = f"bucket {self.bucket}{where}"

    # -- requests ------------------------------------------------------------------------

    def call(self, what: str, fn: Callable[[], T]) -> T:
        attempt = 0
        while True:
            try:
                return fn()
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
                message = str(exc.response.get("Error", {}).get("Message", "")) or str(exc)
                if code in ("NoSuchBucket", "404") and what.startswith("Checking"):
                    raise ConnectException(
                        f"The {self.where} does not exist; create it or fix s3.bucket.name"
                    ) from None
                if code == "NoSuchBucket":
                    raise ConnectException(
                        f"{what} failed: the {self.where} does not exist; create it or fix s3.bucket.name"
                    ) from None
                if code in _CREDENTIAL_CODES:
                    raise ConnectException(
                        f"{what} failed: S3 refused the credentials or access ({code}: {message}); check "
                        "aws.access.key.id and aws.secret.access.key (or the credential chain) and the "
                        f"permissions on the {self.where}"
                    ) from None
                if not (code in _TRANSIENT_CODES or status >= 500 or status == 429):
                    raise ConnectException(f"{what} failed: {code} {message}") from None
                problem = f"{code or status} {message}"
            except NoCredentialsError:
                raise ConnectException(
                    f"{what} failed: no AWS credentials found; set aws.access.key.id and "
                    "aws.secret.access.key or configure the standard credential chain"
                ) from None
            except BotoCoreError as exc:  # connection refused, reset or timed out
                problem = str(exc)
            if attempt >= self.config.s3_part_retries or self.stopping.is_set():
                raise TransientStoreError(
                    f"{what} failed {attempt + 1} times ({problem}); the {self.where} will be tried again"
                )
            wait = backoff_seconds(attempt, self.config.s3_retry_backoff_ms)
            log.warning("%s failed (%s); retrying in %.2f s", what, problem, wait)
            attempt += 1
            self.stopping.wait(wait)

    def check_bucket(self) -> None:
        # A listing, not HeadBucket: a HEAD answer has no body, so no error code saying whether
        # the bucket is missing or which credential was refused. The sink lists for recovery
        # anyway, so it needs s3:ListBucket regardless.
        self.call(
            f"Checking the {self.where}", lambda: self.client.list_objects_v2(Bucket=self.bucket, MaxKeys=1)
        )

    def keys(self, prefix: str) -> Iterator[str]:
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": prefix}
            if token:
                kwargs["ContinuationToken"] = token
            page = self.call(f"Listing {prefix}", lambda kw=kwargs: self.client.list_objects_v2(**kw))  # type: ignore[misc]
            for item in page.get("Contents") or ():
                yield str(item["Key"])
            if not page.get("IsTruncated"):
                return
            token = page.get("NextContinuationToken")

    def metadata(self, key: str) -> dict[str, str]:
        head = self.call(f"Reading {key}", lambda: self.client.head_object(Bucket=self.bucket, Key=key))
        return {str(k).lower(): str(v) for k, v in (head.get("Metadata") or {}).items()}

    # -- uploads -------------------------------------------------------------------------

    def upload(
        self,
        key: str,
        body: IO[bytes],
        size: int,
        metadata: dict[str, str],
        content_type: str,
        encoding: str | None,
    ) -> None:
        extra: dict[str, Any] = {"Metadata": metadata, "ContentType": content_type}
        if encoding:
            extra["ContentEncoding"] = encoding
        part = self.config.s3_part_size
        if size <= part:
            data = body.read()
            self.call(
                f"Writing {key}",
                lambda: self.client.put_object(Bucket=self.bucket, Key=key, Body=data, **extra),
            )
            return
        created = self.call(
            f"Starting the multipart upload of {key}",
            lambda: self.client.create_multipart_upload(Bucket=self.bucket, Key=key, **extra),
        )
        upload_id = created["UploadId"]
        try:
            parts = []
            number = 1
            while chunk := body.read(part):
                etag = self.call(
                    f"Writing part {number} of {key}",
                    lambda n=number, c=chunk: self.client.upload_part(  # type: ignore[misc]
                        Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=n, Body=c
                    )["ETag"],
                )
                parts.append({"ETag": etag, "PartNumber": number})
                number += 1
            self.call(
                f"Completing {key}",
                lambda: self.client.complete_multipart_upload(
                    Bucket=self.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
                ),
            )
        except BaseException:
            # The parts would otherwise be stored (and billed) until a lifecycle rule drops them.
            try:
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)
            except Exception:
                log.warning("Could not abort the multipart upload of %s", key, exc_info=True)
            raise

    def close(self) -> None:
        self.stopping.set()
        self.client.close()
