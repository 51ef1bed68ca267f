"""Request bodies and non-JSON answers.

Uploads: JSON, form-encoded, raw (a campaign's CSV) and multipart (knowledge-base files). A
file object or an iterator of bytes is sent as a stream (chunked), never read whole; such a body
can be sent once only, so it is not retried. Downloads: a non-JSON answer (an MP3 recording, a
CSV export) is handed over unread as a ``Download``.
"""

import io
import json
import shutil
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import IO, Any, BinaryIO, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union

FileContent = Union[bytes, str, BinaryIO, Iterable[bytes]]


@dataclass(frozen=True)
class FileUpload:
    """A file with its name and media type, for a multipart upload: ``to_file(open(p, 'rb'), 'faq.pdf')``."""

    content: FileContent
    filename: str
    content_type: str = "application/octet-stream"


Uploadable = Union[FileContent, FileUpload]


def to_file(content: FileContent, filename: str, content_type: str = "application/octet-stream") -> FileUpload:
    return FileUpload(content, filename, content_type)


def _is_binary(value: Any) -> bool:
    return isinstance(value, (bytes, bytearray, FileUpload, io.IOBase)) or hasattr(value, "read")


def _replayable(content: Any) -> bool:
    return isinstance(content, (bytes, bytearray, str))


def encode_body(kind: Optional[str], body: Any) -> Tuple[Any, Optional[str], bool]:
    """(data for urllib, content type, whether it can be sent again)."""
    if body is None or kind is None:
        return None, None, True
    if kind == "json":
        return json.dumps(body).encode(), "application/json", True
    if kind == "form":
        return urllib.parse.urlencode(body).encode(), "application/x-www-form-urlencoded", True
    if kind in ("csv", "raw"):
        content = body.content if isinstance(body, FileUpload) else body
        data = content.encode() if isinstance(content, str) else content
        return data, ("text/csv" if kind == "csv" else "application/octet-stream"), _replayable(content)
    fields: Dict[str, Any] = body
    if kind == "json-or-multipart" and not any(_is_binary(v) for v in fields.values()):
        return encode_body("json", body)
    return _multipart(fields)


def _chunks(content: FileContent) -> Iterator[bytes]:
    if isinstance(content, (bytes, bytearray)):
        yield bytes(content)
    elif isinstance(content, str):
        yield content.encode()
    elif hasattr(content, "read"):
        reader: IO[bytes] = content  # type: ignore[assignment]
        while True:
            chunk = reader.read(64 * 1024)
            if not chunk:
                return
            yield chunk
    else:
        yield from content  # type: ignore[misc]


def _multipart(fields: Mapping[str, Any]) -> Tuple[Any, str, bool]:
    boundary = f"----voice-agent-sdk-{uuid.uuid4().hex}"
    parts: list = []
    replayable = True
    for name, value in fields.items():
        if value is None:
            continue
        if _is_binary(value):
            upload = value if isinstance(value, FileUpload) else FileUpload(value, "upload")
            replayable = replayable and _replayable(upload.content)
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{upload.filename}"\r\nContent-Type: {upload.content_type}\r\n\r\n'
            parts += [head.encode(), upload.content, b"\r\n"]
        else:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(f"--{boundary}--\r\n".encode())
    content_type = f"multipart/form-data; boundary={boundary}"
    if replayable:
        return b"".join(p if isinstance(p, bytes) else b"".join(_chunks(p)) for p in parts), content_type, True
    return (chunk for part in parts for chunk in _chunks(part)), content_type, False


class Download:
    """A non-JSON answer, unread: iterate it, read it, or save it. Close it (or use ``with``)."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.status: int = response.status
        self.headers: Mapping[str, str] = response.headers

    @property
    def content_type(self) -> str:
        return (self.headers.get("content-type") or "").split(";")[0].strip()

    def iter_bytes(self, chunk_size: int = 64 * 1024) -> Iterator[bytes]:
        while True:
            chunk = self.response.read(chunk_size)
            if not chunk:
                return
            yield chunk

    def read(self) -> bytes:
        return self.response.read()

    def text(self) -> str:
        return self.read().decode("utf-8")

    def save(self, path: str) -> int:
        """Streams the body into a file; answers the number of bytes written."""
        with open(path, "wb") as file:
            shutil.copyfileobj(self.response, file, 64 * 1024)
            return file.tell()

    def close(self) -> None:
        self.response.close()

    def __enter__(self) -> "Download":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
