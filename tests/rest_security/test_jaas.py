"""Kafka's JAAS file for the basic-auth extension, and where its path comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect.rest.jaas import JaasError, credentials_file_of, login_config_path, parse_jaas

KAFKA_EXAMPLE = """\
// the JAAS file of Kafka's documentation
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="/mnt/secret/credentials.properties";
};
"""


def jaas(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "connect_jaas.conf"
    path.write_text(text)
    return path


def test_kafka_example(tmp_path: Path) -> None:
    assert credentials_file_of(jaas(tmp_path, KAFKA_EXAMPLE)) == Path("/mnt/secret/credentials.properties")


def test_other_entries_comments_and_options() -> None:
    entries = parse_jaas(
        """
        KafkaClient { org.apache.kafka.common.security.plain.PlainLoginModule required
            username="u" password="p\\"q"; };
        /* block
           comment */
        # hash comment
        KafkaConnect {
            org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule Required
            debug=true file = "/etc/users";
        };
        """
    )
    assert set(entries) == {"KafkaClient", "KafkaConnect"}
    assert entries["KafkaClient"].modules[0].options == {"username": "u", "password": 'p"q'}
    module = entries["KafkaConnect"].modules[0]
    assert (module.flag, module.options, module.line) == (
        "required",
        {"debug": "true", "file": "/etc/users"},
        8,
    )


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("KafkaServer { a.B required; };", "", "no KafkaConnect entry"),
        ("KafkaConnect {\n};", ":1", "has no login module"),
        ('KafkaConnect {\n  com.example.LdapLoginModule required url="x";\n};', ":2", "is not supported"),
        (
            "KafkaConnect {\n org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
            " required;\n};",
            ":2",
            'needs file="<credentials file>"',
        ),
        ("KafkaConnect {\n x.Y mandatory;\n};", ":2", "'mandatory' is not a login module flag"),
        ('KafkaConnect {\n x.Y required file="a"\n}', ":3", "expected ';' after login module x.Y"),
        ('KafkaConnect {\n x.Y required file="a;\n};', ":2", "unterminated string"),
        ('KafkaConnect {\n x.Y required file="a";\n}', ":3", "the file ends where ';' after"),
    ],
)
def test_unusable_files_name_file_and_line(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = jaas(tmp_path, text)
    with pytest.raises(JaasError, match=message) as caught:
        credentials_file_of(path)
    assert str(caught.value).startswith(f"{path}{where}: ")


def test_where_the_path_comes_from() -> None:
    assert login_config_path(None, {}) is None
    assert login_config_path(None, {"KAFKA_OPTS": "-Xmx1g"}) is None
    opts = "-Xmx1g '-Djava.security.auth.login.config=/etc/a b.conf' -Dother=1"
    assert login_config_path(None, {"KAFKA_OPTS": opts}) == (
        Path("/etc/a b.conf"),
        "KAFKA_OPTS -Djava.security.auth.login.config",
    )
    last = "-Djava.security.auth.login.config=/one -Djava.security.auth.login.config==/two"
    assert login_config_path(None, {"KAFKA_OPTS": last})[0] == Path("/two")  # type: ignore[index]
    worker = login_config_path("/w.conf", {"KAFKA_OPTS": opts})
    assert worker == (Path("/w.conf"), "worker config java.security.auth.login.config")
    with pytest.raises(JaasError, match="KAFKA_OPTS"):
        login_config_path(None, {"KAFKA_OPTS": "'-Dunclosed"})
