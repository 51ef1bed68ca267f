#!/usr/bin/env python3
"""Generates the Python SDK's typed models and resource classes from the platform's openapi.json.

``python3 scripts/generate.py`` writes voice_agent_platform/_generated/; ``--check`` fails when the
committed files differ from what openapi.json gives; ``--spec FILE`` reads another document.
Names come from sdks/naming.json (shared with the other SDKs), spelt in snake_case.
Standard library only.
"""

import json
import keyword
import re
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

from render_resources import HEADER, body_kind, pascal, render_client_base, render_operations, render_resource, snake

ROOT = Path(__file__).resolve().parent.parent
OPENAPI = ROOT.parent.parent / "openapi.json"
NAMING = json.loads((ROOT.parent / "naming.json").read_text())
OUT = ROOT / "voice_agent_platform" / "_generated"
METHODS = ["get", "post", "put", "patch", "delete"]


def safe(name: str) -> str:
    """A name Python accepts (``import`` → ``import_``)."""
    return f"{name}_" if keyword.iskeyword(name) else name


def place_of(operation_id: str, tag: str) -> Tuple[str, str]:
    if operation_id in NAMING["overrides"]:
        resource, method = NAMING["overrides"][operation_id]
    else:
        resource = NAMING["resourceOfTag"].get(tag) or re.sub(r"[-\s]+(\w)", lambda m: m.group(1).upper(), tag)
        method = operation_id
        for noun in NAMING["nouns"].get(resource, []):
            at = method.find(noun)
            if at > 0:
                method = method[:at] + method[at + len(noun):]
                break
        method = re.sub(r"With$", "", method)
        method = re.sub(r"^get(?=[A-Z]|$)", "retrieve", method)
        method = method[:1].lower() + method[1:]
    return snake(resource), safe(snake(method))


class Models:
    """JSON Schema → Python types; objects become TypedDicts (required and optional keys apart)."""

    def __init__(self) -> None:
        self.classes: List[str] = []
        self.defined: Dict[str, str] = {}

    def type_of(self, schema: Any, context: str) -> str:
        if not isinstance(schema, dict) or not {k for k in schema if k not in ("description", "examples", "default", "title")}:
            return "Any"
        if "$ref" in schema:
            return repr(re.sub(r"^#/components/schemas/|#$", "", schema["$ref"]))
        if "const" in schema:
            return f"Literal[{schema['const']!r}]"
        if "enum" in schema:
            return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]" if all(v is not None for v in schema["enum"]) else "Any"
        variants = schema.get("anyOf") or schema.get("oneOf")
        if variants:
            types = list(dict.fromkeys(self.type_of(v, f"{context}{i or ''}") for i, v in enumerate(variants)))
            return types[0] if len(types) == 1 else "Union[" + ", ".join(types) + "]"
        kind = schema.get("type")
        if isinstance(kind, list):
            return "Union[" + ", ".join(self.type_of({**schema, "type": k}, context) for k in kind) + "]"
        simple = {"integer": "int", "number": "float", "boolean": "bool", "null": "None"}
        if kind in simple:
            return simple[kind]
        if kind == "string":
            return "Uploadable" if schema.get("format") == "binary" else "str"
        if kind == "array":
            return f"List[{self.type_of(schema.get('items'), context + 'Item')}]"
        if kind == "object" or "properties" in schema:
            return self.object_type(schema, context)
        return "Any"

    def object_type(self, schema: Dict[str, Any], context: str) -> str:
        props = schema.get("properties") or {}
        if not props:
            extra = schema.get("additionalProperties")
            return f"Dict[str, {self.type_of(extra, context + 'Value') if isinstance(extra, dict) else 'Any'}]"
        name = schema.get("title") if isinstance(schema.get("title"), str) and schema["title"].isidentifier() else context
        shape = json.dumps(schema, sort_keys=True)
        if self.defined.get(name) not in (None, shape):
            name = context
        if self.defined.get(name) == shape:
            return repr(name)
        self.defined[name] = shape
        required = set(schema.get("required") or [])
        fields = {key: self.type_of(value, name + pascal(key)) for key, value in props.items()}
        doc = (schema.get("description") or "").replace('"""', "'''")
        lines = [
            f"_{name}Required = TypedDict({'_' + name + 'Required'!r}, {{" + ", ".join(f"{k!r}: {t}" for k, t in fields.items() if k in required) + "})",
            f"_{name}Optional = TypedDict({'_' + name + 'Optional'!r}, {{" + ", ".join(f"{k!r}: {t}" for k, t in fields.items() if k not in required) + "}, total=False)",
            f"\n\nclass {name}(_{name}Required, _{name}Optional):\n    " + (f'"""{doc}"""' if doc else "pass"),
        ]
        self.classes.append("\n".join(lines) + "\n")
        return repr(name)


def operations_of(spec: Dict[str, Any]) -> List[Dict[str, Any]]:
    ops = []
    for route, item in spec["paths"].items():
        for method in (m for m in METHODS if m in item):
            op = item[method]
            resource, name = place_of(op["operationId"], (op.get("tags") or ["misc"])[0])
            params = op.get("parameters") or []
            success = next((r for status, r in op.get("responses", {}).items() if re.fullmatch(r"2\d\d", status)), {})
            content = success.get("content") or {}
            json_schema = (content.get("application/json") or {}).get("schema")
            query = [p for p in params if p["in"] == "query"]
            is_page = bool(json_schema and {"data", "has_more", "next_cursor"} <= set(json_schema.get("properties", {})) and any(p["name"] == "cursor" for p in query))
            ops.append({
                "id": op["operationId"], "summary": op.get("summary", ""), "method": method.upper(), "path": route,
                "resource": resource, "name": name, "public": op.get("security") == [],
                "path_params": [p["name"] for p in params if p["in"] == "path"], "query": query,
                "body": (op.get("requestBody") or {}).get("content") or {}, "body_required": (op.get("requestBody") or {}).get("required", False),
                "response": json_schema,
                "response_type": ("page" if is_page else "json") if json_schema else ("binary" if content else "void"),
            })
    return ops


def query_schema(op: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "object", "required": [p["name"] for p in op["query"] if p.get("required")], "properties": {p["name"]: p.get("schema", {}) for p in op["query"]}}


def render_models(spec: Dict[str, Any], ops: List[Dict[str, Any]]) -> str:
    models = Models()
    aliases = []
    for name, schema in (spec.get("components") or {}).get("schemas", {}).items():
        produced = models.type_of({**schema, "title": name} if schema.get("type") == "object" else schema, name)
        if produced != repr(name):
            aliases.append(f"{name} = {produced}")
    for op in ops:
        base = pascal(op["id"])
        if op["query"]:
            aliases.append(f"{base}Query = {models.type_of(query_schema(op), base + 'Query')}")
        for media in ("application/json", "application/x-www-form-urlencoded"):
            if media in op["body"]:
                aliases.append(f"{base}Body = {models.type_of(op['body'][media]['schema'], base + 'Body')}")
        if "multipart/form-data" in op["body"] and body_kind(op["body"]) != "csv":
            aliases.append(f"{base}Upload = {models.type_of(op['body']['multipart/form-data']['schema'], base + 'Upload')}")
        if op["response"]:
            aliases.append(f"{base}Response = {models.type_of(op['response'], base + 'Response')}")
    imports = "from typing import Any, Dict, List, Literal, TypedDict, Union\n\nfrom .._streams import Uploadable\n"
    return HEADER + '"""The API\'s request and response shapes (TypedDicts), from openapi.json."""\n\n' + imports + "\n\n" + "\n\n".join(models.classes) + "\n\n" + "\n".join(aliases) + "\n"


def render(spec: Dict[str, Any]) -> Dict[str, str]:
    ops = operations_of(spec)
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for op in ops:
        groups.setdefault(op["resource"], []).append(op)
    seen = set()
    for op in ops:
        if (op["resource"], op["name"]) in seen:
            raise SystemExit(f"two operations are named {op['resource']}.{op['name']}: add an override in sdks/naming.json")
        seen.add((op["resource"], op["name"]))
    # An item of a list is typed by the list's response model.
    items = "\n".join(f"{pascal(op['id'])}ResponseItem = Any  # an item of {pascal(op['id'])}Response['data']" for op in ops if op["response_type"] == "page")
    files = {
        "__init__.py": HEADER,
        "models.py": render_models(spec, ops) + "\n" + items + "\n",
        "client_base.py": render_client_base(groups),
        "operations.py": render_operations(ops),
        "resources/__init__.py": HEADER,
    }
    for resource, group in groups.items():
        files[f"resources/{resource}.py"] = render_resource(resource, group, safe)
    return files


def outdated(files: Dict[str, str]) -> List[str]:
    stale = [name for name, text in files.items() if not (OUT / name).exists() or (OUT / name).read_text() != text]
    present = [str(p.relative_to(OUT)) for p in OUT.rglob("*.py")] if OUT.exists() else []
    return stale + [name for name in present if name not in files]


def main(argv: List[str]) -> int:
    spec_file = Path(argv[argv.index("--spec") + 1]) if "--spec" in argv else OPENAPI
    files = render(json.loads(spec_file.read_text()))
    if "--check" in argv:
        stale = outdated(files)
        if stale:
            print(f"voice_agent_platform/_generated is out of date with openapi.json (run python3 scripts/generate.py): {', '.join(sorted(stale))}", file=sys.stderr)
            return 1
        return 0
    shutil.rmtree(OUT, ignore_errors=True)
    for name, text in files.items():
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(text)
    print(f"wrote {len(files)} files to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
