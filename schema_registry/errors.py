"""Confluent's error responses: an HTTP status, an ``error_code`` and a message.

The codes and the wording follow Confluent's ``Errors`` and ``rest/exceptions`` classes, so
clients that match on ``error_code`` (confluent-kafka's ``SchemaRegistryError``, the Java
client) behave as they do against Confluent's registry. The HTTP status is the code's
first three digits.
"""

from __future__ import annotations

__all__ = ["RegistryError"]


class RegistryError(Exception):
    """An error the REST API answers with ``{"error_code": code, "message": message}``."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    # -- 404 ------------------------------------------------------------------------------------

    @classmethod
    def subject_not_found(cls, subject: str) -> RegistryError:
        return cls(404, 40401, f"Subject '{subject}' not found.")

    @classmethod
    def version_not_found(cls, version: int | str) -> RegistryError:
        return cls(404, 40402, f"Version {version} not found.")

    @classmethod
    def schema_not_found(cls, schema_id: int | None = None) -> RegistryError:
        return cls(404, 40403, "Schema not found" if schema_id is None else f"Schema {schema_id} not found")

    @classmethod
    def subject_soft_deleted(cls, subject: str) -> RegistryError:
        return cls(
            404,
            40404,
            f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently",
        )

    @classmethod
    def subject_not_soft_deleted(cls, subject: str) -> RegistryError:
        return cls(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")

    @classmethod
    def version_soft_deleted(cls, subject: str, version: int) -> RegistryError:
        return cls(
            404,
            40406,
            f"Subject '{subject}' Version {version} was soft deleted."
            "Set permanent=true to delete permanently",
        )

    @classmethod
    def version_not_soft_deleted(cls, subject: str, version: int) -> RegistryError:
        return cls(
            404,
            40407,
            f"Subject '{subject}' Version {version} was not deleted first before being permanently deleted",
        )

    @classmethod
    def compatibility_not_configured(cls, subject: str) -> RegistryError:
        return cls(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")

    @classmethod
    def mode_not_configured(cls, subject: str) -> RegistryError:
        return cls(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")

    # -- 409, 422 -------------------------------------------------------------------------------

    @classmethod
    def incompatible(cls, subject: str, messages: list[str]) -> RegistryError:
        return cls(
            409,
            409,
            f'Schema being registered is incompatible with an earlier schema for subject "{subject}", '
            f"details: {messages}",
        )

    @classmethod
    def invalid_schema(cls, detail: str) -> RegistryError:
        return cls(422, 42201, f"Invalid schema {detail}")

    @classmethod
    def invalid_version(cls, version: str) -> RegistryError:
        return cls(
            422,
            42202,
            f"The specified version '{version}' is not a valid version id. Allowed values are between "
            '[1, 2^31-1] and the string "latest"',
        )

    @classmethod
    def invalid_compatibility_level(cls, level: object) -> RegistryError:
        return cls(
            422,
            42203,
            f"Invalid compatibility level {level}. Valid values are none, backward, forward, full, "
            "backward_transitive, forward_transitive, and full_transitive",
        )

    @classmethod
    def invalid_mode(cls, mode: object) -> RegistryError:
        return cls(
            422,
            42204,
            f"Invalid mode {mode}. Valid values are READWRITE, READONLY, READONLY_OVERRIDE and IMPORT",
        )

    @classmethod
    def not_permitted(cls, message: str) -> RegistryError:
        return cls(422, 42205, message)

    @classmethod
    def reference_exists(cls, message: str) -> RegistryError:
        return cls(422, 42206, message)

    @classmethod
    def unprocessable(cls, message: str) -> RegistryError:
        """A request body that is not what the API takes (Jersey's 422 for bad JSON)."""
        return cls(422, 422, message)

    # -- 500 ------------------------------------------------------------------------------------

    @classmethod
    def store_error(cls, message: str) -> RegistryError:
        return cls(500, 50001, f"Error in the backend data store - {message}")

    @classmethod
    def store_timeout(cls, message: str) -> RegistryError:
        return cls(500, 50002, f"Error while waiting for the backend data store - {message}")
