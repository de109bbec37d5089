# SPDX-License-Identifier: Apache-2.0
# The shipped type stubs name exactly the module's public API (module level and per class).
import ast
import dataclasses
import pathlib

import pytest

import attnsel

PACKAGE = pathlib.Path(attnsel.__file__).parent


def stub_tree(name):
    return ast.parse((PACKAGE / name).read_text())


def public(names):
    return {n for n in names if not n.startswith("_")}


def top_level_names(tree):
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            out.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and node.level == 1:  # `from .plan import X as X`: re-exported
            out.update(a.name for a in node.names if a.asname == a.name)
    return out


def stub_classes(tree):
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def members(cls_node):
    out = set()
    for node in cls_node.body:
        if isinstance(node, ast.FunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return public(out)


def test_the_package_ships_stubs_and_the_py_typed_marker():
    for name in ("__init__.pyi", "torch.pyi", "py.typed"):
        assert (PACKAGE / name).is_file(), name


def test_module_level_names_match():
    assert public(top_level_names(stub_tree("__init__.pyi"))) == set(attnsel.__all__)
    assert public(n for n in dir(attnsel) if n not in ("torch", "detect", "engines", "tune", "plan", "transformers")) == set(attnsel.__all__)


@pytest.mark.parametrize("name", sorted(stub_classes(stub_tree("__init__.pyi"))))
def test_class_members_match(name):
    stub = members(stub_classes(stub_tree("__init__.pyi"))[name])
    cls = getattr(attnsel, name)
    if issubclass(cls, Exception):
        reg, hopper = attnsel.reference_registry(), attnsel.Platform.cuda(9, 0)
        if cls is attnsel.SelectionError:
            instance = attnsel.select(reg, attnsel.Query(), hopper, "NOPE", raise_on_error=False)
        else:
            try:
                attnsel.parse_catalog("[]")
            except attnsel.CatalogError as e:
                instance = e
        runtime = public(vars(instance))
    else:
        runtime = public(dir(cls))
        if dataclasses.is_dataclass(cls):  # fields without defaults are not class attributes
            runtime |= {f.name for f in dataclasses.fields(cls)}
    assert stub == runtime


def test_torch_stub_matches_the_torch_modules_all():
    source = ast.parse((PACKAGE / "torch.py").read_text())
    declared = next(node.value for node in source.body
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__")
    assert public(top_level_names(stub_tree("torch.pyi"))) == set(ast.literal_eval(declared))
