"""moto's S3 in server mode and the fault proxy in front of it, driven by real boto3 clients.

Fault tests build their clients with ``total_max_attempts=1``: botocore's ``max_attempts``
counts *retries*, so ``{"max_attempts": 1}`` still retries once and would hide a single
injected fault (``test_max_attempts_counts_retries`` shows it).
"""

from __future__ import annotations

import gzip
import http.client
import http.server
import subprocess
import sys
import threading
import time
import uuid
import zlib
from base64 import b64encode
from collections.abc import Iterator
from typing import Any

import botocore.session
import psutil
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError

from tests.contract_servers.s3 import OPERATIONS, MotoS3Server, S3FaultProxy, classify
from tests.support import ROOT, wait_until

NO_RETRY = Config(retries={"total_max_attempts": 1, "mode": "standard"})
MIB = 1 << 20


def new_bucket_name() -> str:
    # The in-process server keeps moto's process-wide state: every test gets its own bucket.
    return f"bkt-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def moto() -> Iterator[MotoS3Server]:
    with MotoS3Server() as server:
        yield server


@pytest.fixture
def proxy(moto: MotoS3Server) -> Iterator[S3FaultProxy]:
    with S3FaultProxy(moto.url) as p:
        yield p


@pytest.fixture
def bucket(moto: MotoS3Server) -> str:
    name = new_bucket_name()
    moto.client().create_bucket(Bucket=name)
    return name


@pytest.fixture
def client(moto: MotoS3Server, proxy: S3FaultProxy) -> Any:
    """Through the proxy, without retries."""
    return moto.client(proxy.url, config=NO_RETRY)


def error_of(excinfo: pytest.ExceptionInfo[ClientError]) -> tuple[str, int]:
    response = excinfo.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


def gone(pid: int) -> bool:
    # A zombie counts as gone: whoever inherits an orphan may never reap it.
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


# --------------------------------------------------------------------------------------------
# the S3 API through boto3


def test_buckets_create_and_list(moto: MotoS3Server, client: Any) -> None:
    names = sorted(new_bucket_name() for _ in range(2))
    for name in names:
        client.create_bucket(Bucket=name)
    listed = {b["Name"] for b in client.list_buckets()["Buckets"]}
    assert set(names) <= listed
    assert client.head_bucket(Bucket=names[0])["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert moto.url == f"http://127.0.0.1:{moto.port}"


def test_put_get_head_with_user_metadata(client: Any, bucket: str) -> None:
    put = client.put_object(
        Bucket=bucket, Key="dir/a.json", Body=b'{"a": 1}', Metadata={"k": "v"}, ContentType="application/json"
    )
    head = client.head_object(Bucket=bucket, Key="dir/a.json")
    assert head["Metadata"] == {"k": "v"}
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-meta-k"] == "v"
    assert head["ContentLength"] == 8
    assert head["ETag"] == put["ETag"]
    got = client.get_object(Bucket=bucket, Key="dir/a.json")
    assert got["Body"].read() == b'{"a": 1}'
    assert got["ContentType"] == "application/json"
    assert got["Metadata"] == {"k": "v"}


def test_user_metadata_keys_come_back_lowercased(client: Any, bucket: str) -> None:
    client.put_object(Bucket=bucket, Key="m", Body=b"x", Metadata={"Topic-Name": "A", "under_score": "b"})
    assert client.head_object(Bucket=bucket, Key="m")["Metadata"] == {"topic-name": "A", "under_score": "b"}


def test_missing_bucket_and_key_errors(client: Any, bucket: str) -> None:
    missing = new_bucket_name()
    # HEAD answers carry no body, so botocore only has the status for a code.
    with pytest.raises(ClientError) as head_bucket:
        client.head_bucket(Bucket=missing)
    assert error_of(head_bucket) == ("404", 404)
    with pytest.raises(ClientError) as put:
        client.put_object(Bucket=missing, Key="k", Body=b"x")
    assert error_of(put) == ("NoSuchBucket", 404)
    with pytest.raises(ClientError) as head_object:
        client.head_object(Bucket=bucket, Key="nope")
    assert error_of(head_object) == ("404", 404)
    with pytest.raises(ClientError) as get:
        client.get_object(Bucket=bucket, Key="nope")
    assert error_of(get) == ("NoSuchKey", 404)


def test_list_objects_v2_prefix_and_pagination(client: Any, bucket: str) -> None:
    keys = [f"topic/p0/{i:05d}.json" for i in range(5)] + ["topic/p1/00000.json", "other/x"]
    for key in keys:
        client.put_object(Bucket=bucket, Key=key, Body=b"{}")
    seen: list[str] = []
    pages = 0
    kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": "topic/p0/", "MaxKeys": 2}
    while True:
        page = client.list_objects_v2(**kwargs)
        pages += 1
        assert page["KeyCount"] == len(page["Contents"]) <= 2
        seen += [o["Key"] for o in page["Contents"]]
        if not page["IsTruncated"]:
            break
        kwargs["ContinuationToken"] = page["NextContinuationToken"]
    assert seen == keys[:5]
    assert pages == 3
    delimited = client.list_objects_v2(Bucket=bucket, Prefix="topic/", Delimiter="/")
    assert [p["Prefix"] for p in delimited["CommonPrefixes"]] == ["topic/p0/", "topic/p1/"]
    assert client.list_objects_v2(Bucket=bucket, Prefix="none/")["KeyCount"] == 0


def test_multipart_upload_through_proxy(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    first, last = b"a" * (5 * MIB), b"b" * 1000
    upload = client.create_multipart_upload(Bucket=bucket, Key="big.bin", Metadata={"k": "v"})
    parts = []
    for number, data in enumerate((first, last), start=1):
        part = client.upload_part(
            Bucket=bucket, Key="big.bin", UploadId=upload["UploadId"], PartNumber=number, Body=data
        )
        parts.append({"PartNumber": number, "ETag": part["ETag"]})
    done = client.complete_multipart_upload(
        Bucket=bucket, Key="big.bin", UploadId=upload["UploadId"], MultipartUpload={"Parts": parts}
    )
    assert done["ETag"].endswith('-2"')
    got = client.get_object(Bucket=bucket, Key="big.bin")
    assert got["ContentLength"] == len(first) + len(last)
    assert got["Metadata"] == {"k": "v"}
    assert got["Body"].read() == first + last
    counts = proxy.counts()
    assert (counts["CreateMultipartUpload"], counts["UploadPart"], counts["CompleteMultipartUpload"]) == (
        1,
        2,
        1,
    )


def test_multipart_part_below_minimum_is_refused(client: Any, bucket: str) -> None:
    upload = client.create_multipart_upload(Bucket=bucket, Key="small-parts")
    parts = []
    for number in (1, 2):
        part = client.upload_part(
            Bucket=bucket, Key="small-parts", UploadId=upload["UploadId"], PartNumber=number, Body=b"x" * 100
        )
        parts.append({"PartNumber": number, "ETag": part["ETag"]})
    with pytest.raises(ClientError) as excinfo:
        client.complete_multipart_upload(
            Bucket=bucket, Key="small-parts", UploadId=upload["UploadId"], MultipartUpload={"Parts": parts}
        )
    assert error_of(excinfo) == ("EntityTooSmall", 400)
    client.abort_multipart_upload(Bucket=bucket, Key="small-parts", UploadId=upload["UploadId"])


def test_gzip_content_encoding_round_trip(client: Any, bucket: str) -> None:
    raw = b'{"n": 1}\n' * 1000
    body = gzip.compress(raw)
    client.put_object(
        Bucket=bucket, Key="x.json.gz", Body=body, ContentEncoding="gzip", ContentType="application/json"
    )
    got = client.get_object(Bucket=bucket, Key="x.json.gz")
    assert got["ContentEncoding"] == "gzip"
    # Stored and returned as sent: neither moto nor botocore decompresses.
    data = got["Body"].read()
    assert data == body
    assert gzip.decompress(data) == raw


def test_checksums_sent_by_default_are_stored(client: Any, bucket: str) -> None:
    body = b"checksummed"
    put = client.put_object(Bucket=bucket, Key="c", Body=body)
    expected = b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()
    assert put["ChecksumCRC32"] == expected
    got = client.get_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == expected
    assert got["Body"].read() == body


# --------------------------------------------------------------------------------------------
# forwarding


def test_chunked_request_body_is_forwarded(moto: MotoS3Server, proxy: S3FaultProxy, bucket: str) -> None:
    pieces = [b"abc", b"", b"d" * 100_000, b"efg"]
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request(
        "PUT",
        f"/{bucket}/chunked",
        body=iter(pieces),
        headers={"Transfer-Encoding": "chunked"},
        encode_chunked=True,
    )
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 200
    assert moto.client().get_object(Bucket=bucket, Key="chunked")["Body"].read() == b"".join(pieces)


def test_aws_chunked_body_is_forwarded(moto: MotoS3Server, proxy: S3FaultProxy, bucket: str) -> None:
    """botocore sends aws-chunked bodies with trailing checksums over HTTPS only; a sink on
    HTTPS would send this shape (unsigned payload, checksum trailer)."""
    data = b"aws chunked " * 5000
    checksum = b64encode(zlib.crc32(data).to_bytes(4, "big"))
    body = b"%x\r\n%s\r\n0\r\nx-amz-checksum-crc32:%s\r\n\r\n" % (len(data), data, checksum)
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request(
        "PUT",
        f"/{bucket}/aws-chunked",
        body=body,
        headers={
            "Content-Encoding": "aws-chunked",
            "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
            "x-amz-decoded-content-length": str(len(data)),
            "x-amz-trailer": "x-amz-checksum-crc32",
        },
    )
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 200
    assert moto.client().get_object(Bucket=bucket, Key="aws-chunked")["Body"].read() == data


class _ChunkedTarget(http.server.BaseHTTPRequestHandler):
    """A target that answers in chunks (moto sends lengths), to check the proxy relays them."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-amz-meta-k", "v")
        self.end_headers()
        for piece in (b"one,", b"two," * 10_000, b"three"):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")


def test_chunked_response_is_relayed() -> None:
    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChunkedTarget)
    serving = threading.Thread(target=target.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    serving.start()
    try:
        with S3FaultProxy(f"http://127.0.0.1:{target.server_address[1]}") as proxy:
            conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
            for _ in range(2):  # the same kept-alive connection twice
                conn.request("GET", "/b/k")
                response = conn.getresponse()
                assert response.status == 200
                assert response.chunked
                assert response.getheader("x-amz-meta-k") == "v"
                assert response.read() == b"one," + b"two," * 10_000 + b"three"
            conn.close()
    finally:
        target.shutdown()
        target.server_close()
        serving.join(5)


def test_client_connections_are_kept_alive(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    response = client.get_object(Bucket=bucket, Key="k")
    response["Body"].read()
    # moto's server closes every connection; the proxy does not pass that on.
    assert "connection" not in response["ResponseMetadata"]["HTTPHeaders"]


# --------------------------------------------------------------------------------------------
# faults


def test_slowdown_503_surfaces_and_never_reaches_moto(
    moto: MotoS3Server, client: Any, bucket: str, proxy: S3FaultProxy
) -> None:
    proxy.fail_next(1)
    with pytest.raises(ClientError) as excinfo:
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert error_of(excinfo) == ("SlowDown", 503)
    assert excinfo.value.response["Error"]["Message"] == "Please reduce your request rate."
    assert len(excinfo.value.response["ResponseMetadata"]["RequestId"]) == 16
    with pytest.raises(ClientError):
        moto.client().head_object(Bucket=bucket, Key="k")
    client.put_object(Bucket=bucket, Key="k", Body=b"x")  # only one was injected
    assert [o.status for o in proxy.observations] == [503, 200]


def test_internal_error_500(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(1, status=500)
    with pytest.raises(ClientError) as excinfo:
        client.list_objects_v2(Bucket=bucket)
    assert error_of(excinfo) == ("InternalError", 500)
    assert excinfo.value.response["Error"]["Message"] == "We encountered an internal error. Please try again."


def test_access_denied_403_and_custom_code(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(1, status=403)
    proxy.fail_next(1, status=400, code="RequestTimeout")
    with pytest.raises(ClientError) as denied:
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert error_of(denied) == ("AccessDenied", 403)
    with pytest.raises(ClientError) as timeout:
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert error_of(timeout) == ("RequestTimeout", 400)
    assert proxy.pending_faults == 0


def test_injected_error_on_head_has_only_a_status(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(1, operation="HeadBucket")
    with pytest.raises(ClientError) as excinfo:
        client.head_bucket(Bucket=bucket)
    assert error_of(excinfo) == ("503", 503)


def test_injected_errors_can_target_one_key(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(2, operation="PutObject", key="orders+0+0000000000.json")
    client.put_object(Bucket=bucket, Key="t/orders+0+0000000010.json", Body=b"b")  # another key
    for _ in range(2):
        with pytest.raises(ClientError) as excinfo:
            client.put_object(Bucket=bucket, Key="t/orders+0+0000000000.json", Body=b"a")
        assert error_of(excinfo) == ("SlowDown", 503)
    client.put_object(Bucket=bucket, Key="t/orders+0+0000000000.json", Body=b"a")
    assert proxy.pending_faults == 0


def test_injected_error_after_a_large_body(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    """The proxy reads the whole body (sent after ``Expect: 100-continue``) before answering,
    so the client gets the status, not a broken pipe."""
    upload = client.create_multipart_upload(Bucket=bucket, Key="big")
    proxy.fail_next(1, operation="UploadPart")
    with pytest.raises(ClientError) as excinfo:
        client.upload_part(
            Bucket=bucket, Key="big", UploadId=upload["UploadId"], PartNumber=1, Body=b"p" * (6 * MIB)
        )
    assert error_of(excinfo) == ("SlowDown", 503)
    part = client.upload_part(
        Bucket=bucket, Key="big", UploadId=upload["UploadId"], PartNumber=1, Body=b"p" * (6 * MIB)
    )
    assert part["ETag"]


@pytest.mark.parametrize("body", [b"x", b"y" * (6 * MIB)], ids=["small", "large"])
def test_dropped_connection(client: Any, bucket: str, proxy: S3FaultProxy, body: bytes) -> None:
    proxy.drop_next(1)
    with pytest.raises(ConnectionClosedError):
        client.put_object(Bucket=bucket, Key="k", Body=body)
    client.put_object(Bucket=bucket, Key="k", Body=body)
    assert [o.status for o in proxy.observations] == [0, 200]


def test_dropped_read(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    proxy.drop_next(1, methods={"GET"})
    with pytest.raises(ConnectionClosedError):
        client.get_object(Bucket=bucket, Key="k")
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"


def test_stop_then_start_on_the_same_port(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    client.put_object(Bucket=bucket, Key="k", Body=b"x")  # leaves a kept-alive connection
    port = proxy.port
    proxy.stop()
    assert not proxy.running
    with pytest.raises(EndpointConnectionError):
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(EndpointConnectionError):
        client.head_object(Bucket=bucket, Key="k")
    proxy.start()
    assert proxy.port == port
    assert client.head_object(Bucket=bucket, Key="k")["ContentLength"] == 1


def test_default_retries_pass_a_single_503(moto: MotoS3Server, bucket: str, proxy: S3FaultProxy) -> None:
    client = moto.client(proxy.url)  # botocore's own retry settings
    proxy.fail_next(1, operation="PutObject")
    put = client.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert put["ResponseMetadata"]["RetryAttempts"] == 1
    assert [(o.operation, o.status) for o in proxy.observations] == [("PutObject", 503), ("PutObject", 200)]


def test_default_retries_pass_a_single_drop(moto: MotoS3Server, bucket: str, proxy: S3FaultProxy) -> None:
    client = moto.client(proxy.url)
    proxy.drop_next(1)
    assert client.put_object(Bucket=bucket, Key="k", Body=b"x")["ResponseMetadata"]["RetryAttempts"] == 1


def test_max_attempts_counts_retries(moto: MotoS3Server, bucket: str, proxy: S3FaultProxy) -> None:
    client = moto.client(proxy.url, config=Config(retries={"max_attempts": 1, "mode": "standard"}))
    proxy.fail_next(1)
    assert client.put_object(Bucket=bucket, Key="k", Body=b"x")["ResponseMetadata"]["RetryAttempts"] == 1
    proxy.fail_next(2)
    with pytest.raises(ClientError) as excinfo:
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert error_of(excinfo) == ("SlowDown", 503)


def test_operation_filter(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(1, operation="UploadPart")
    client.put_object(Bucket=bucket, Key="plain", Body=b"x")
    upload = client.create_multipart_upload(Bucket=bucket, Key="mp")
    client.list_objects_v2(Bucket=bucket)
    with pytest.raises(ClientError) as excinfo:
        client.upload_part(Bucket=bucket, Key="mp", UploadId=upload["UploadId"], PartNumber=1, Body=b"x")
    assert error_of(excinfo) == ("SlowDown", 503)
    client.upload_part(Bucket=bucket, Key="mp", UploadId=upload["UploadId"], PartNumber=1, Body=b"x")
    assert [(o.operation, o.status) for o in proxy.observations] == [
        ("PutObject", 200),
        ("CreateMultipartUpload", 200),
        ("ListObjectsV2", 200),
        ("UploadPart", 503),
        ("UploadPart", 200),
    ]


def test_methods_filter(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(1, status=500, methods={"get"})
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    client.head_object(Bucket=bucket, Key="k")
    with pytest.raises(ClientError) as excinfo:
        client.get_object(Bucket=bucket, Key="k")
    assert error_of(excinfo) == ("InternalError", 500)
    assert [o.method for o in proxy.observations] == ["PUT", "HEAD", "GET"]


def test_faults_queue_in_order(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    proxy.fail_next(1, status=500, operation="PutObject")
    proxy.drop_next(1, operation="PutObject")
    proxy.fail_next(1, operation="GetObject")
    assert proxy.pending_faults == 3
    with pytest.raises(ClientError):
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(ConnectionClosedError):
        client.put_object(Bucket=bucket, Key="k", Body=b"x")
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    proxy.clear_faults()
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"


def test_unknown_operation_is_refused(proxy: S3FaultProxy) -> None:
    with pytest.raises(ValueError, match="PutObjects"):
        proxy.fail_next(1, operation="PutObjects")


def test_delay(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    client.put_object(Bucket=bucket, Key="k", Body=b"x")
    proxy.delay(200)
    started = time.monotonic()
    client.head_object(Bucket=bucket, Key="k")
    assert time.monotonic() - started >= 0.2
    proxy.delay(0)
    started = time.monotonic()
    client.head_object(Bucket=bucket, Key="k")
    assert time.monotonic() - started < 0.2


def test_observations_and_reset(client: Any, bucket: str, proxy: S3FaultProxy) -> None:
    client.put_object(Bucket=bucket, Key="a/b", Body=b"x")
    client.list_objects_v2(Bucket=bucket, Prefix="a/")
    method, operation, path, status = proxy.observations[0]
    assert (method, operation, path, status) == ("PUT", "PutObject", f"/{bucket}/a/b", 200)
    assert proxy.observations[1].path.startswith(f"/{bucket}?list-type=2")
    assert proxy.count("ListObjectsV2") == 1
    proxy.reset_observations()
    assert proxy.observations == []
    assert proxy.counts() == {}


@pytest.mark.parametrize(
    ("method", "target", "headers", "operation"),
    [
        ("GET", "/", {}, "ListBuckets"),
        ("PUT", "/b", {}, "CreateBucket"),
        ("HEAD", "/b", {}, "HeadBucket"),
        ("GET", "/b?list-type=2&prefix=a%2F", {}, "ListObjectsV2"),
        ("GET", "/b", {}, "ListObjects"),
        ("GET", "/b?uploads", {}, "ListMultipartUploads"),
        ("POST", "/b?delete", {}, "DeleteObjects"),
        ("GET", "/b?location", {}, "GetBucketLocation"),
        ("PUT", "/b/k/x.json", {}, "PutObject"),
        ("PUT", "/b/k", {"x-amz-copy-source": "/b/j"}, "CopyObject"),
        ("GET", "/b/k", {}, "GetObject"),
        ("HEAD", "/b/k", {}, "HeadObject"),
        ("DELETE", "/b/k", {}, "DeleteObject"),
        ("POST", "/b/k?uploads", {}, "CreateMultipartUpload"),
        ("PUT", "/b/k?uploadId=u&partNumber=2", {}, "UploadPart"),
        ("PUT", "/b/k?partNumber=2&uploadId=u", {"x-amz-copy-source": "/b/j"}, "UploadPartCopy"),
        ("POST", "/b/k?uploadId=u", {}, "CompleteMultipartUpload"),
        ("DELETE", "/b/k?uploadId=u", {}, "AbortMultipartUpload"),
        ("GET", "/b/k?uploadId=u", {}, "ListParts"),
        ("PUT", "/b/k?tagging", {}, "PutObjectTagging"),
        ("DELETE", "/b?lifecycle", {}, "DeleteBucketLifecycle"),
        ("PUT", "/b?location", {}, "Unknown"),
        ("PATCH", "/b/k", {}, "Unknown"),
    ],
)
def test_classify(method: str, target: str, headers: dict[str, str], operation: str) -> None:
    assert classify(method, target, headers) == operation
    assert operation in OPERATIONS


def test_operation_names_are_botocores() -> None:
    names = botocore.session.get_session().get_service_model("s3").operation_names
    assert OPERATIONS - set(names) == {"Unknown"}


# --------------------------------------------------------------------------------------------
# lifecycle, processes, authentication


def test_nothing_left_running_after_stop() -> None:
    before = set(threading.enumerate())
    with MotoS3Server() as server, S3FaultProxy(server.url) as proxy:
        client = server.client(proxy.url, config=NO_RETRY)
        name = new_bucket_name()
        client.create_bucket(Bucket=name)
        for i in range(3):
            client.put_object(Bucket=name, Key=str(i), Body=b"x")
        proxy.drop_next(1)
        with pytest.raises(ConnectionClosedError):
            client.get_object(Bucket=name, Key="0")
        proxy.delay(5000)
        errors: list[Exception] = []

        def slow_call() -> None:
            try:
                client.head_bucket(Bucket=name)
            except Exception as exc:
                errors.append(exc)

        slow = threading.Thread(target=slow_call)
        slow.start()
        time.sleep(0.3)  # the request now waits out the delay inside the proxy
    slow.join(10)
    assert not slow.is_alive()
    assert [type(e) for e in errors] == [ConnectionClosedError]
    assert set(threading.enumerate()) - before == set()


def test_subprocess_server() -> None:
    with MotoS3Server(process=True) as server, S3FaultProxy(server.url) as proxy:
        pid = server.pid
        assert pid is not None and not gone(pid)
        client = server.client(proxy.url, config=NO_RETRY)
        name = new_bucket_name()
        client.create_bucket(Bucket=name)
        client.put_object(Bucket=name, Key="k", Body=b"x" * MIB)
        assert client.get_object(Bucket=name, Key="k")["Body"].read() == b"x" * MIB
        proxy.fail_next(1)
        with pytest.raises(ClientError):
            client.get_object(Bucket=name, Key="k")
        assert name in {b["Name"] for b in client.list_buckets()["Buckets"]}
        server.reset()
        assert name not in {b["Name"] for b in client.list_buckets()["Buckets"]}
        code = server.stop()
    assert code == 0
    assert gone(pid)
    assert not server.running


def test_subprocess_does_not_outlive_a_killed_parent() -> None:
    script = (
        "import os, signal\n"
        "from tests.contract_servers.s3 import MotoS3Server\n"
        "server = MotoS3Server(process=True).start()\n"
        "print(server.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    parent = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert parent.returncode == -9, parent.stderr
    child = int(parent.stdout.split()[0])
    wait_until(lambda: gone(child), timeout=10, message="the orphaned moto server to exit")


def test_subprocess_stopped_at_interpreter_exit() -> None:
    script = (
        "from tests.contract_servers.s3 import MotoS3Server\n"
        "server = MotoS3Server(process=True).start()\n"
        "print(server.pid, flush=True)\n"
    )
    parent = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert gone(int(parent.stdout.split()[0]))


def test_auth_mode() -> None:
    with pytest.raises(ValueError, match="process=True"):
        MotoS3Server(auth=True)
    with MotoS3Server(process=True, auth=True) as server, S3FaultProxy(server.url) as proxy:
        key_id, secret = server.credentials
        assert key_id.startswith("AKIA") and key_id != "testing"
        name = new_bucket_name()
        direct = server.client(config=NO_RETRY)
        direct.create_bucket(Bucket=name)
        # Through the proxy the signature still verifies: it forwards requests unchanged.
        proxied = server.client(proxy.url, config=NO_RETRY)
        proxied.put_object(Bucket=name, Key="k", Body=b"x" * (2 * MIB), Metadata={"k": "v"})
        assert proxied.get_object(Bucket=name, Key="k")["Metadata"] == {"k": "v"}

        for credentials, code in [
            (("testing", "testing"), "InvalidAccessKeyId"),
            ((key_id, secret + "x"), "SignatureDoesNotMatch"),
        ]:
            for endpoint in (server.url, proxy.url):
                wrong = server.client(endpoint, credentials=credentials, config=NO_RETRY)
                with pytest.raises(ClientError) as excinfo:
                    wrong.put_object(Bucket=name, Key="k2", Body=b"x")
                assert error_of(excinfo) == (code, 403)
                with pytest.raises(ClientError) as head:
                    wrong.head_bucket(Bucket=name)
                assert error_of(head) == ("403", 403)

        server.reset()  # a new user and key
        assert server.credentials[0] != key_id
        with pytest.raises(ClientError) as excinfo:
            direct.list_buckets()
        assert error_of(excinfo) == ("InvalidAccessKeyId", 403)
        assert server.client(config=NO_RETRY).list_buckets()["Buckets"] == []
