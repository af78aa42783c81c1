"""The live stack the jest wrapper (test/integration/sdk-python.test.ts) started, read from its env."""

from __future__ import annotations

import os
import re
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

from workflow_engine import AsyncWorkflowEngine, WorkflowEngine

RESOURCES = "esign.resources.get-resource-information"
DELETE = "esign.authorizations.delete-user-authorization"


@dataclass(frozen=True)
class Stack:
    api_url: str
    token: str
    other_token: str
    esign_url: str
    esign_token: str
    limited_api_url: str
    limited_tokens: tuple[str, str]


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through test/integration/sdk-python.test.ts")
    return value


@pytest.fixture(scope="session")
def stack() -> Stack:
    return Stack(
        api_url=_env("TEST_API_URL"),
        token=_env("TEST_TOKEN_A"),
        other_token=_env("TEST_TOKEN_B"),
        esign_url=_env("TEST_ESIGN_URL"),
        esign_token=_env("TEST_ESIGN_TOKEN"),
        limited_api_url=_env("TEST_LIMITED_API_URL"),
        limited_tokens=(_env("TEST_LIMITED_TOKEN_SYNC"), _env("TEST_LIMITED_TOKEN_ASYNC")),
    )


@pytest.fixture
def client(stack: Stack) -> Iterator[WorkflowEngine]:
    with WorkflowEngine(stack.api_url, stack.token) as engine:
        yield engine


@pytest.fixture
async def aclient(stack: Stack) -> AsyncIterator[AsyncWorkflowEngine]:
    async with AsyncWorkflowEngine(stack.api_url, stack.token) as engine:
        yield engine


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def delete_input(stack: Stack, behaviour: str) -> dict[str, str]:
    """A delete-user-authorization input whose authorization id picks the e-signature double's behaviour."""
    return {
        "base_url": stack.esign_url,
        "api_token": stack.esign_token,
        "accountid": "4711",
        "userid": unique("user"),
        "authorizationid": unique(behaviour),
    }


_TRANSITION = re.compile(rb"event: ?transition\r?\n.*?\n\r?\n", re.S)


class CuttingProxy:
    """A TCP proxy to the API that drops the first stream it carries right after its first transition event.

    `requests` holds the head of every request it saw, so a test can check what the client resent.
    """

    def __init__(self, api_url: str):
        parts = urlsplit(api_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.requests: list[str] = []
        self.cut = False
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(downstream,), daemon=True).start()

    def _serve(self, downstream: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = downstream.recv(65536)
            if not chunk:
                downstream.close()
                upstream.close()
                return
            head += chunk
        upstream.sendall(head)
        with self._lock:
            self.requests.append(head.decode("latin-1"))
            cut_this = b"/stream" in head.split(b"\r\n", 1)[0] and not self.cut
            self.cut = self.cut or cut_this
        threading.Thread(target=self._pump, args=(downstream, upstream), daemon=True).start()
        received = b""
        try:
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                if not cut_this:
                    downstream.sendall(chunk)
                    continue
                received += chunk
                match = _TRANSITION.search(received)
                if match:
                    downstream.sendall(received[: match.end()])
                    break
        except OSError:
            pass
        finally:
            for s in (downstream, upstream):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    @staticmethod
    def _pump(source: socket.socket, target: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
        except OSError:
            pass


@pytest.fixture
def cutting_proxy(stack: Stack) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(stack.api_url)
    yield proxy
    proxy.close()
