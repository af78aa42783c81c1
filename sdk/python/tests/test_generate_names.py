"""Module names of the generated bindings: importable identifiers, one per workflow type."""

from __future__ import annotations

from workflow_engine.generate import module_name, module_names


def test_every_catalog_name_shape_is_an_identifier() -> None:
    names = [
        module_name(t)
        for t in [
            "esign.resources.get-resource-information",
            "virtual.daaa9a67-a790-4301-b761-5ab20dd21002@1",
            "acme.2fa.send_code",
            "3d.render",
            "import",
        ]
    ]
    assert names == [
        "esign_resources_get_resource_information",
        "virtual_daaa9a67_a790_4301_b761_5ab20dd21002_1",
        "acme_2fa_send_code",
        "m_3d_render",
        "import_",
    ]
    assert all(n.isidentifier() for n in names)


def test_types_that_fold_to_one_name_get_distinct_modules_in_catalog_order() -> None:
    names = module_names(["acme-send.code", "acme.send-code", "acme.send_code", "esign.x"])
    assert names == {
        "acme-send.code": "acme_send_code",
        "acme.send-code": "acme_send_code_2",
        "acme.send_code": "acme_send_code_3",
        "esign.x": "esign_x",
    }
