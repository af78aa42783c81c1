"""The hooks, compositions, entitlements and apps managers, with both clients."""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from conftest import RESOURCES, Stack, unique

from workflow_engine import (
    AsyncWorkflowEngine,
    BadRequestError,
    NotFoundError,
    ValidationError,
    WorkflowEngine,
)
from workflow_engine.models import HookEvent


class HookTarget:
    """A loopback webhook receiver on the host test providers may use (127.0.0.2, any port): it answers 200
    and keeps each delivery's raw body and Webhook-Signature header."""

    def __init__(self) -> None:
        received: list[tuple[str, str, str]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
                received.append((self.path, self.headers.get("webhook-signature", ""), body))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        self.url = f"http://127.0.0.2:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def signed_with(self, path: str, secret: str) -> list[bool]:
        """For each delivery to `path`: whether its signature is the HMAC-SHA256 of "<t>.<body>" under `secret`."""
        results = []
        for got_path, header, body in self.received:
            if got_path != path:
                continue
            parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
            expected = hmac.new(secret.encode(), f"{parts.get('t')}.{body}".encode(), hashlib.sha256).hexdigest()
            results.append(hmac.compare_digest(expected, parts.get("v1", "")))
        return results


@pytest.fixture
def target() -> Iterator[HookTarget]:
    hook_target = HookTarget()
    yield hook_target
    hook_target.server.shutdown()
    hook_target.server.server_close()


def _wait_delivered(get_event: Callable[[str], HookEvent], event_uuid: str) -> HookEvent:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        event = get_event(event_uuid)
        if event.state == "delivered":
            return event
        time.sleep(0.2)
    raise AssertionError(f"event {event_uuid} not delivered")


def test_hooks_sync(client: WorkflowEngine, stack: Stack, target: HookTarget) -> None:
    created = client.hooks.create_endpoint(unique("py-endpoint"), f"{target.url}/sync")
    secret = created.signing_secret
    assert secret is not None and secret.startswith("whsec_")
    assert secret not in repr(created)
    assert (created.secret_source, created.secret_ref, created.state) == ("generated", None, "active")
    endpoint_uuid = created.endpoint_uuid
    fetched = client.hooks.get_endpoint(endpoint_uuid)
    assert fetched.model_dump() == created.model_dump(exclude={"signing_secret"})
    assert not hasattr(fetched, "signing_secret")
    assert endpoint_uuid in {e.endpoint_uuid for e in client.hooks.list_endpoints()}

    accepted = httpx.post(created.ingress_url, content='{"n":1}', headers={"content-type": "application/json"})
    assert accepted.status_code == 202
    event_uuid = accepted.json()["event_uuid"]
    delivered = _wait_delivered(client.hooks.get_event, event_uuid)
    assert (delivered.body, delivered.attempts[0].status_code) == ('{"n":1}', 200)
    assert target.signed_with("/sync", secret) == [True]
    assert [e.event_uuid for e in client.hooks.list_events(endpoint_uuid, limit=5)] == [event_uuid]

    rotated = client.hooks.rotate_secret(endpoint_uuid)
    assert rotated.signing_secret.startswith("whsec_") and rotated.signing_secret != secret
    replayed = client.hooks.replay_event(event_uuid)
    assert replayed.event_uuid == event_uuid
    client.workflows.handle(replayed.workflow_id).wait(timeout=30)
    assert target.signed_with("/sync", rotated.signing_secret) == [False, True]
    assert client.hooks.acknowledge_event(event_uuid).state == "acknowledged"

    with WorkflowEngine(stack.api_url, stack.other_token) as other, pytest.raises(NotFoundError):
        other.hooks.get_endpoint(endpoint_uuid)
    client.hooks.delete_endpoint(endpoint_uuid)
    with pytest.raises(NotFoundError):
        client.hooks.get_endpoint(endpoint_uuid)


async def test_hooks_async(aclient: AsyncWorkflowEngine, target: HookTarget) -> None:
    created = await aclient.hooks.create_endpoint(unique("py-endpoint"), f"{target.url}/async")
    assert created.signing_secret is not None
    endpoint_uuid = created.endpoint_uuid
    assert (await aclient.hooks.get_endpoint(endpoint_uuid)).name == created.name
    assert endpoint_uuid in {e.endpoint_uuid for e in await aclient.hooks.list_endpoints()}
    async with httpx.AsyncClient() as http:
        accepted = await http.post(created.ingress_url, content="hello")
    event_uuid = accepted.json()["event_uuid"]
    assert [e.event_uuid for e in await aclient.hooks.list_events(endpoint_uuid)] == [event_uuid]
    assert (await aclient.hooks.get_event(event_uuid)).body == "hello"
    rotated = await aclient.hooks.rotate_secret(endpoint_uuid)
    assert rotated.signing_secret != created.signing_secret
    with pytest.raises(ValidationError) as bad:
        await aclient.hooks.create_endpoint(unique("py-endpoint"), "http://example.com/hook")
    assert [(f.field, f.rule) for f in bad.value.fields] == [("target_url", "outbound_policy")]
    await aclient.hooks.delete_endpoint(endpoint_uuid)
    with pytest.raises(NotFoundError):
        await aclient.hooks.get_event(event_uuid)


def _steps() -> list[dict[str, object]]:
    inputs = {"base_url": {"from": "input", "name": "base_url"}, "api_token": {"from": "input", "name": "api_token"}}
    return [{"id": "info", "workflow_type": RESOURCES, "inputs": inputs}]


def test_compositions_sync(client: WorkflowEngine, stack: Stack) -> None:
    created = client.compositions.create("py-resources", _steps())
    uuid = created.composition_uuid
    assert (created.version, created.workflow_type) == (1, f"virtual.{uuid}@1")
    assert sorted(created.input_schema["properties"]) == ["api_token", "base_url"]
    assert uuid in {c.composition_uuid for c in client.compositions.list()}
    updated = client.compositions.update(uuid, "py-resources v2", _steps(), exposed_to_end_users=True)
    assert (updated.version, updated.workflow_type) == (2, f"virtual.{uuid}@2")
    detail = client.compositions.get(uuid)
    assert (detail.name, detail.exposed_to_end_users) == ("py-resources v2", True)
    assert [v.version for v in detail.versions] == [2, 1]
    assert [(step.id, step.workflow_type, step.inputs) for step in detail.steps] == [
        (step["id"], step["workflow_type"], step["inputs"]) for step in _steps()
    ]
    output = client.workflows.start(
        updated.workflow_type, {"base_url": stack.esign_url, "api_token": stack.esign_token}
    )
    assert "info" in output.wait(timeout=45)


async def test_compositions_async(aclient: AsyncWorkflowEngine) -> None:
    created = await aclient.compositions.create("py-resources", _steps())
    assert created.composition_uuid in {c.composition_uuid for c in await aclient.compositions.list()}
    updated = await aclient.compositions.update(created.composition_uuid, "renamed", _steps())
    assert updated.version == 2
    assert (await aclient.compositions.get(created.composition_uuid)).name == "renamed"
    with pytest.raises(ValidationError) as bad:
        await aclient.compositions.create("bad", [{"id": "a", "workflow_type": "no.such.type"}])
    assert ("steps.0.workflow_type", "unknown_type") in [(f.field, f.rule) for f in bad.value.fields]


def test_entitlements_sync(client: WorkflowEngine) -> None:
    page = client.entitlements.page(subject="nobody-py", limit=5)
    assert (page.entitlements, page.next_cursor) == ([], None)
    assert list(client.entitlements.list(subject="nobody-py", page_size=5)) == []
    with pytest.raises(BadRequestError) as bad:
        client.entitlements.page(cursor="not-a-cursor")
    assert (bad.value.status, bad.value.code) == (400, "invalid_cursor")


def _grant(client: WorkflowEngine, subject: str) -> str:
    run = client.workflows.start(
        "payments.access.grant_on_payment",
        {
            "event_id": unique("evt"),
            "event_type": "checkout.session.completed",
            "object_id": "cs_py",
            "client_reference_id": subject,
            "customer_id": None,
            "event_metadata": {},
        },
    )
    return str(run.wait(timeout=45)["entitlement_uuid"])


def test_entitlements_pages_sync(client: WorkflowEngine) -> None:
    subject = unique("py-pager")
    granted = [_grant(client, subject) for _ in range(3)]
    page = client.entitlements.page(subject=subject, limit=2)
    assert [e.entitlement_uuid for e in page.entitlements] == granted[:0:-1]
    assert page.next_cursor is not None
    assert [e.entitlement_uuid for e in client.entitlements.list(subject=subject, page_size=2)] == granted[::-1]


async def test_entitlements_pages_async(client: WorkflowEngine, aclient: AsyncWorkflowEngine) -> None:
    subject = unique("py-apager")
    granted = [_grant(client, subject) for _ in range(3)]
    walked = [e.entitlement_uuid async for e in aclient.entitlements.list(subject=subject, page_size=2)]
    assert walked == granted[::-1]


async def test_entitlements_async(aclient: AsyncWorkflowEngine) -> None:
    page = await aclient.entitlements.page(subject="nobody-py-async", limit=1)
    assert page.entitlements == [] and page.next_cursor is None
    assert [e async for e in aclient.entitlements.list(subject="nobody-py-async", page_size=1)] == []
    with pytest.raises(BadRequestError) as bad:
        await aclient.entitlements.page(cursor="not-a-cursor")
    assert bad.value.code == "invalid_cursor"


def test_apps_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(
        "identity.app.provision", {"name": unique("py-app"), "redirect_uris": ["https://py.example.test/cb"]}
    )
    client_key = run.wait(timeout=45)["client_key"]
    app = next(a for a in client.apps.list() if a.client_key == client_key)
    assert app.redirect_uris == ["https://py.example.test/cb"]
    with WorkflowEngine(stack.api_url, stack.other_token) as other:
        assert client_key not in {a.client_key for a in other.apps.list()}


async def test_apps_async(aclient: AsyncWorkflowEngine) -> None:
    run = await aclient.workflows.start(
        "identity.app.provision", {"name": unique("py-app"), "redirect_uris": ["https://py.example.test/cb"]}
    )
    client_key = (await run.wait(timeout=45))["client_key"]
    assert client_key in {a.client_key for a in await aclient.apps.list()}
    app = next(a for a in await aclient.apps.list() if a.client_key == client_key)
    with pytest.raises(NotFoundError) as unknown:
        await aclient.apps.clear_end_user_totp(app.client_uuid, str(uuid.uuid4()))
    assert "end user" in unknown.value.message


def test_clear_end_user_totp_sync(client: WorkflowEngine) -> None:
    with pytest.raises(NotFoundError) as unknown:
        client.apps.clear_end_user_totp(str(uuid.uuid4()), str(uuid.uuid4()))
    assert "end user" in unknown.value.message
