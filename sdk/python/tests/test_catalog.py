"""The catalog, who-am-I, plugins and connections, with both clients."""

from __future__ import annotations

import pytest
from conftest import DELETE, RESOURCES, Stack, unique

from workflow_engine import AsyncWorkflowEngine, NotFoundError, WorkflowEngine


def test_list_types_sync(client: WorkflowEngine) -> None:
    listing = client.catalog.list_types(prefix="esign")
    names = sorted(t.workflow_type for t in listing.types)
    assert names == sorted([DELETE, RESOURCES])
    assert [n.name for n in listing.namespaces] == ["esign"]
    everything = {t.workflow_type for t in client.catalog.list_types().types}
    assert set(names) < everything


async def test_list_types_async(aclient: AsyncWorkflowEngine) -> None:
    listing = await aclient.catalog.list_types(prefix="esign")
    assert sorted(t.workflow_type for t in listing.types) == sorted([DELETE, RESOURCES])
    assert [n.name for n in listing.namespaces] == ["esign"]


def test_schema_definition_prerequisites_sync(client: WorkflowEngine) -> None:
    schema = client.catalog.get_schema(RESOURCES)
    assert schema.input_schema["type"] == "object"
    assert "base_url" in schema.input_schema["properties"]
    assert "status_code" in schema.output_schema["properties"]
    definition = client.catalog.get_definition(RESOURCES)
    assert definition.workflow_type == RESOURCES
    assert [s.name for s in definition.states if s.initial] == ["PENDING"]
    assert any(t.from_ == "PENDING" and t.to == "COMPLETED" for t in definition.transitions)
    prerequisites = client.catalog.get_prerequisites(RESOURCES)
    assert prerequisites.workflow_type == RESOURCES
    with pytest.raises(NotFoundError):
        client.catalog.get_schema("no.such.type")


async def test_schema_definition_prerequisites_async(aclient: AsyncWorkflowEngine) -> None:
    schema = await aclient.catalog.get_schema(RESOURCES)
    assert "base_url" in schema.input_schema["properties"]
    definition = await aclient.catalog.get_definition(RESOURCES)
    assert [s.name for s in definition.states if s.initial] == ["PENDING"]
    assert (await aclient.catalog.get_prerequisites(RESOURCES)).workflow_type == RESOURCES
    with pytest.raises(NotFoundError):
        await aclient.catalog.get_definition("no.such.type")


def test_me_and_plugins_sync(client: WorkflowEngine) -> None:
    me = client.me()
    assert me.organization_uuid.startswith("org_")
    assert {p.name for p in client.plugins.list()} >= {"esign", "dbhost"}
    assert client.health().status == "ok"


def test_a_base_url_ending_in_api_sync(stack: Stack) -> None:
    with WorkflowEngine(f"{stack.api_url.rstrip('/')}/api/", stack.token) as engine:
        assert engine.me().organization_uuid.startswith("org_")


async def test_a_base_url_ending_in_api_async(stack: Stack) -> None:
    async with AsyncWorkflowEngine(f"{stack.api_url.rstrip('/')}/api", stack.token) as engine:
        assert (await engine.me()).organization_uuid.startswith("org_")


async def test_me_and_plugins_async(aclient: AsyncWorkflowEngine) -> None:
    assert (await aclient.me()).organization_uuid.startswith("org_")
    assert {p.name for p in await aclient.plugins.list()} >= {"esign", "dbhost"}
    assert (await aclient.health()).database == "ok"


def test_connections_sync(client: WorkflowEngine, stack: Stack) -> None:
    name = unique("sync-conn")
    created = client.connections.create("esign", name, {"api_token": stack.esign_token}, {"base_url": stack.esign_url})
    assert created.name == name
    # The create answer holds no config: the SDK must not invent an empty one.
    assert set(created.model_dump()) == {"connection_uuid", "plugin", "name", "created_at"}
    listed = client.connections.list(plugin="esign")
    assert created.connection_uuid in {c.connection_uuid for c in listed}
    renamed = client.connections.update(created.connection_uuid, name=name + "-2")
    assert renamed.name == name + "-2"
    fetched = client.connections.get(created.connection_uuid)
    assert stack.esign_token not in fetched.model_dump_json()
    assert set(fetched.config) == {"base_url"}
    client.connections.delete(created.connection_uuid)
    with pytest.raises(NotFoundError):
        client.connections.get(created.connection_uuid)


async def test_connections_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    name = unique("async-conn")
    created = await aclient.connections.create(
        "esign", name, {"api_token": stack.esign_token}, {"base_url": stack.esign_url}
    )
    assert created.connection_uuid in {c.connection_uuid for c in await aclient.connections.list()}
    assert (await aclient.connections.update(created.connection_uuid, name=name + "-2")).name == name + "-2"
    await aclient.connections.delete(created.connection_uuid)
    with pytest.raises(NotFoundError):
        await aclient.connections.get(created.connection_uuid)
