"""``sluiceway schemas``: a Schema Registry from the command line (ours or Confluent's), over
its REST API.

    sluiceway schemas [--schema-registry URL] list [--prefix P] [--deleted]
    sluiceway schemas show SUBJECT [--version V]
    sluiceway schemas register SUBJECT FILE [--type AVRO] [--normalize]
    sluiceway schemas check SUBJECT FILE [--version V]     (exit status 1 when incompatible)
    sluiceway schemas delete SUBJECT [--version V] [--permanent]
    sluiceway schemas config [SUBJECT] [--set LEVEL]

``--schema-registry`` defaults to ``$SCHEMA_REGISTRY_URL`` or http://127.0.0.1:8081. A
refusal prints the registry's message and code and exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

__all__ = ["main"]


class _Refused(Exception):
    pass


class _Registry:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.http = httpx.Client(timeout=30)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            r = self.http.request(
                method,
                self.url + path,
                json=body,
                headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
            )
        except httpx.HTTPError as exc:
            raise _Refused(f"cannot reach the Schema Registry at {self.url}: {exc}") from None
        if r.status_code >= 400:
            try:
                error = r.json()
                raise _Refused(f"{error.get('message')} (error {error.get('error_code')})")
            except ValueError:
                raise _Refused(f"HTTP {r.status_code}: {r.text[:300]}") from None
        return r.json()


def _subject(name: str) -> str:
    return quote(name, safe="")


def _schema_body(path: str, schema_type: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8") if path != "-" else sys.stdin.read()
    except OSError as exc:
        raise _Refused(f"cannot read {path}: {exc.strerror}") from None
    body: dict[str, Any] = {"schema": text}
    if schema_type.upper() != "AVRO":
        body["schemaType"] = schema_type.upper()
    return body


def _pretty(schema: str) -> str:
    try:
        return json.dumps(json.loads(schema), indent=2)
    except ValueError:
        return schema


def run(args: argparse.Namespace, out: Any) -> int:
    reg = _Registry(args.schema_registry)
    if args.command == "list":
        query = "?deleted=true" if args.deleted else ""
        subjects = [s for s in reg.call("GET", f"/subjects{query}") if s.startswith(args.prefix)]
        if not subjects:
            print("no subjects", file=out)
        for s in subjects:
            versions = reg.call("GET", f"/subjects/{_subject(s)}/versions{query}")
            latest = reg.call("GET", f"/subjects/{_subject(s)}/versions/latest{query}")
            print(f"{s}\tversions {','.join(map(str, versions))}\tlatest id {latest['id']}", file=out)
    elif args.command == "show":
        got = reg.call("GET", f"/subjects/{_subject(args.subject)}/versions/{args.version}")
        kind = got.get("schemaType", "AVRO")
        print(f"{got['subject']} version {got['version']}, id {got['id']}, {kind}", file=out)
        print(_pretty(got["schema"]), file=out)
    elif args.command == "register":
        query = "?normalize=true" if args.normalize else ""
        got = reg.call(
            "POST", f"/subjects/{_subject(args.subject)}/versions{query}", _schema_body(args.file, args.type)
        )
        print(f"registered under {args.subject}: id {got['id']}", file=out)
    elif args.command == "check":
        path = "" if args.version == "all" else f"/{args.version}"
        got = reg.call(
            "POST",
            f"/compatibility/subjects/{_subject(args.subject)}/versions{path}?verbose=true",
            _schema_body(args.file, args.type),
        )
        if got["is_compatible"]:
            print(f"compatible with {args.subject} ({args.version})", file=out)
            return 0
        print(f"NOT compatible with {args.subject} ({args.version}):", file=out)
        for message in got.get("messages", []):
            print(f"  {message}", file=out)
        return 1
    elif args.command == "delete":
        query = "?permanent=true" if args.permanent else ""
        if args.version is None:
            got = reg.call("DELETE", f"/subjects/{_subject(args.subject)}{query}")
            print(
                f"deleted {args.subject} versions {got}{' permanently' if args.permanent else ''}", file=out
            )
        else:
            got = reg.call("DELETE", f"/subjects/{_subject(args.subject)}/versions/{args.version}{query}")
            print(f"deleted {args.subject} version {got}{' permanently' if args.permanent else ''}", file=out)
    elif args.command == "config":
        path = "/config" if args.subject is None else f"/config/{_subject(args.subject)}"
        if args.set is not None:
            got = reg.call("PUT", path, {"compatibility": args.set.upper()})
            print(f"{args.subject or 'global'}: {got['compatibility']}", file=out)
        else:
            got = reg.call("GET", path + ("" if args.subject is None else "?defaultToGlobal=true"))
            print(f"{args.subject or 'global'}: {got['compatibilityLevel']}", file=out)
    return 0


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Work with a Schema Registry over its REST API.")
    p.add_argument(
        "--schema-registry",
        default=os.environ.get("SCHEMA_REGISTRY_URL", "http://127.0.0.1:8081"),
        help="the registry's URL (default $SCHEMA_REGISTRY_URL or http://127.0.0.1:8081)",
    )
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="subjects, their versions and latest ids")
    ls.add_argument("--prefix", default="")
    ls.add_argument("--deleted", action="store_true", help="include soft-deleted subjects and versions")
    show = sub.add_parser("show", help="a subject's schema")
    show.add_argument("subject")
    show.add_argument("--version", default="latest")
    for name, what in (
        ("register", "register a schema file"),
        ("check", "check a schema file's compatibility"),
    ):
        cmd = sub.add_parser(name, help=what)
        cmd.add_argument("subject")
        cmd.add_argument("file", help="the schema's file (- for stdin)")
        cmd.add_argument("--type", default="AVRO", help="AVRO (default), JSON or PROTOBUF")
        if name == "register":
            cmd.add_argument("--normalize", action="store_true")
        else:
            cmd.add_argument(
                "--version", default="latest", help="a version, latest, or all (the subject's level)"
            )
    delete = sub.add_parser("delete", help="delete a subject or one version (soft; then --permanent)")
    delete.add_argument("subject")
    delete.add_argument("--version")
    delete.add_argument("--permanent", action="store_true")
    config = sub.add_parser("config", help="show or set a compatibility level (global without SUBJECT)")
    config.add_argument("subject", nargs="?")
    config.add_argument("--set", metavar="LEVEL")
    return p


def main(argv: list[str] | None = None, prog: str = "sluiceway schemas") -> int:
    args = build_parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args, sys.stdout)
    except _Refused as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
