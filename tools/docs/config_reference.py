#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/reference/config.md from the experiment JSON Schema: every key a config takes, with its
pointer, type, default, unit (x-unit), accepted values, description and source (x-source).

  config_reference.py SCHEMA > docs/reference/config.md      write the page
  config_reference.py SCHEMA --check docs/reference/config.md exit 1 with a diff when the page
                                                              is not what the schema generates
  config_reference.py SCHEMA --compare-build BUILD            exit 1 when the rows differ from
                                                              BUILD's `ipusim.params()`

The rows are those `ipusim params` prints, walked as Schema::params() (sim/config/Schema.cpp)
walks the schema: list elements as "*", a map's entries as "<name>", the workload's keys once per
kind as "/workload(kind)/...", schedule steps and graph ops once per kind below the shortest list
of them ("/workload(schedule)/steps/*(compute)/..."). An integer without a maximum gets the
simulator's 32-bit one, as the loader does. The output depends on the schema alone: the same
schema gives the same bytes.
"""
import argparse
import difflib
import json
import re
import sys
from pathlib import Path

INTEGER_MAXIMUM = 4294967295  # Schema::kIntegerMaximum


def dump(value):
    """A JSON value as nlohmann's dump() writes it: compact, keys sorted, UTF-8 kept."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def bound(value):
    """A bound as the loader words it: 1e6 for 1000000.0, integers as they are."""
    if not isinstance(value, float):
        return dump(value)
    text = "%g" % value
    e = text.find("e+")
    if e >= 0:
        text = text[:e + 1] + text[e + 2:]
    e = text.find("e")
    while e >= 0 and e + 2 < len(text) and (text[e + 1] == "0" or (text[e + 1] == "-" and text[e + 2] == "0")):
        cut = e + 1 if text[e + 1] == "0" else e + 2
        text = text[:cut] + text[cut + 1:]
    return text


def expectation(node):
    """What a key accepts, as the loader's messages and `ipusim params` say it."""
    parts = []
    if "enum" in node:
        parts.append("one of " + dump(node["enum"]))
    if "const" in node:
        parts.append(dump(node["const"]))
    if "type" in node:
        parts.append(node["type"] if isinstance(node["type"], str) else " or ".join(node["type"]))
    if "pattern" in node:
        parts.append("matching " + node["pattern"])
    for key, word in (("minimum", ">= "), ("exclusiveMinimum", "> "), ("maximum", "<= "), ("exclusiveMaximum", "< ")):
        if key in node:
            parts.append(word + bound(node[key]))
    if "oneOf" in node:
        parts.append(node.get("description", "a listed form"))
    return ", ".join(parts)


def bound_integers(node):
    """An integer the schema gives no maximum is at most 2^32 - 1 (the simulator's 32-bit fields)."""
    if isinstance(node, dict):
        kind = node.get("type")
        integer = kind == "integer" or (isinstance(kind, list) and "integer" in kind)
        if integer and "maximum" not in node and "exclusiveMaximum" not in node:
            node["maximum"] = INTEGER_MAXIMUM
        for child in node.values():
            bound_integers(child)
    elif isinstance(node, list):
        for child in node:
            bound_integers(child)


def params(root):
    """The rows of `ipusim params`, in its order: dicts of pointer, type, unit, default, source,
    description and range."""
    out, row_of, dispatch_at = [], {}, {}

    def deref(node):
        if "$ref" in node:
            target = root
            for token in node["$ref"][2:].split("/"):
                target = target[token.replace("~1", "/").replace("~0", "~")]
            return target
        return node

    def holds_objects(node):
        node = deref(node)
        return "properties" in node or "oneOf" in node

    def walk(ref, ptr, depth, outer):
        node = deref(ref)
        description = ref.get("description", node.get("description", outer))
        if depth > 12:
            return
        leaf = "properties" not in node and "oneOf" not in node
        if ptr and leaf and ptr in row_of:
            # Another alternative of a oneOf: the key accepts its values too.
            row = out[row_of[ptr]]
            more = expectation(node)
            if more and more not in row["range"]:
                row["range"] += ("; or " if row["range"] else "") + more
        elif ptr and leaf:
            row_of[ptr] = len(out)
            default = node.get("default", "-")
            kind = node.get("type", "")
            out.append({"pointer": ptr, "type": kind if isinstance(kind, str) else dump(kind),
                        "unit": node.get("x-unit", "-"), "default": default if isinstance(default, str) else dump(default),
                        "source": node.get("x-source", ""), "description": description, "range": expectation(node)})
        for key in sorted(node.get("properties", {})):
            walk(node["properties"][key], f"{ptr}/{key}", depth + 1, "")
        items = node.get("items")
        if isinstance(items, dict) and holds_objects(items):
            # Schedule steps and graph ops are checked per "op" against their own definitions;
            # each kind's keys are listed once, below the shortest list of them.
            target = items.get("$ref", "")
            kinds = {"#/definitions/step": "steps", "#/definitions/graph_op": "graph_ops"}.get(target)
            if kinds and (kinds not in dispatch_at or len(ptr) < len(dispatch_at[kinds])):
                dispatch_at[kinds] = ptr
            elif not kinds:
                walk(items, ptr + "/*", depth + 1, "")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and holds_objects(extra):
            walk(extra, ptr + "/<name>", depth + 1, "")
        for alternative in node.get("oneOf", []):
            walk(alternative, ptr, depth + 1, description)

    walk(root, "", 0, "")
    for kind in sorted(root["definitions"]["workloads"]):
        walk(root["definitions"]["workloads"][kind], f"/workload({kind})", 0, "")
    for kinds in sorted(dispatch_at):
        for op in sorted(root["definitions"][kinds]):
            walk(root["definitions"][kinds][op], f"{dispatch_at[kinds]}/*({op})", 1, "")
    return out


# ---- the page ---------------------------------------------------------------------------------

def text_cell(text):
    """Prose in a table cell: no line breaks, no cell separators, no HTML tags."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code_cell(text):
    """A value in a table cell, as code (a backtick inside would end the span)."""
    if not text:
        return ""
    text = " ".join(text.split()).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def anchor(title):
    """GitHub's anchor for a heading."""
    slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
    return "#" + slug


def section_of(pointer):
    """(order, title) of the section a row goes in."""
    match = re.match(r"/workload\((\w+)\)(.*)", pointer)
    if match:
        kind, rest = match.groups()
        if re.search(r"/\*\(\w+\)", rest):
            what = "schedule steps" if kind == "schedule" else "graph ops"
            return (f"4 {kind} 1", f"Workload {kind}: {what}")
        return (f"4 {kind} 0", f"Workload {kind}")
    top = pointer.split("/")[1]
    order = {"name": "0", "description": "0", "system": "1", "run": "2", "inference": "3", "workload": "3w"}
    titles = {"0": "Experiment", "1": "System", "2": "Run", "3": "Inference phase", "3w": "Workload kind"}
    key = order.get(top, "9")
    return (key, titles.get(key, "Other keys"))


INTRO = """\
# Config reference

Every key an experiment config takes, generated from the JSON Schema every config is validated
against (`configs/schema/experiment.schema.json`) by `tools/docs/config_reference.py`: do not
edit this page, change the schema and regenerate it ([how](#about-this-page)).
"""

ABOUT = """\
## About this page

```sh
python3 tools/docs/config_reference.py configs/schema/experiment.schema.json > docs/reference/config.md
python3 tools/docs/config_reference.py configs/schema/experiment.schema.json --check docs/reference/config.md
```

The second command exits 1 with a diff while this page is not what the schema generates.
`build/ipusim params [FILTER]` prints the same rows from the schema built into the program
(`FILTER`: only pointers that contain it, e.g. `/run/trace` or `/workload(bert)`); how configs
compose and override is in the [user guide](../user-guide.md#configs).

How to read a row:

* **Pointer**: the key's JSON pointer. `*` is any element of a list, `<name>` any entry of a map.
  The keys of `/workload` depend on its `kind`: `/workload(bert)/micro_batch` is
  `/workload/micro_batch` of a `"kind": "bert"` workload. Schedule steps and graph ops are listed
  once per kind: `/workload(schedule)/steps/*(compute)/name` is the `name` of a step whose `op`
  is `compute`, wherever steps are listed (a repeat's body, a fragment, a program).
* **Default**: the value taken when the key is absent; `-`: none (the key is required, or its
  absence means something of its own, given in the description).
* **Unit**: the schema's `x-unit`; empty: none.
* **Accepted**: what the loader checks: type, allowed values, pattern and bounds. An integer
  the schema gives no maximum is at most 4294967295 (the simulator's 32-bit fields).
* **Source**: the schema's `x-source`, where the default comes from. `ipu-facts.md §n` is
  section n of `configs/hardware/ipu-facts.md`, which gives the value's public source and
  evidence ([ipu-facts.md](../../configs/hardware/ipu-facts.md)); `estimate` marks a modelling
  assumption, not a measurement.
"""


def page(rows):
    sections = {}
    for row in rows:
        sections.setdefault(section_of(row["pointer"]), []).append(row)
    order = sorted(sections)
    lines = [INTRO, "## Contents", "", "* [About this page](#about-this-page): how it is made, how to read a row"]
    for key in order:
        count = len(sections[key])
        lines.append(f"* [{key[1]}]({anchor(key[1])}) ({count} key{'' if count == 1 else 's'})")
    lines += ["", ABOUT]
    for key in order:
        lines += [f"## {key[1]}", "", "| Pointer | Type | Default | Unit | Accepted | Description | Source |",
                  "|---|---|---|---|---|---|---|"]
        for row in sections[key]:
            unit = "" if row["unit"] == "-" else text_cell(row["unit"])
            lines.append("| " + " | ".join([code_cell(row["pointer"]), text_cell(row["type"]), code_cell(row["default"]), unit,
                                            code_cell(row["range"]), text_cell(row["description"]),
                                            text_cell(row["source"])]) + " |")
        lines.append("")
    return "\n".join(lines)


def load(schema_path):
    with open(schema_path, encoding="utf-8") as f:
        root = json.load(f)
    bound_integers(root)
    return root


def compare_build(rows, build):
    """Differences between these rows and what the build's `ipusim.params()` gives."""
    sys.path.insert(0, str(Path(build) / "python"))
    import ipusim  # noqa: E402 (the build's module)
    theirs = ipusim.params()
    fields = ("pointer", "type", "unit", "default", "source", "description", "range")
    mine = [tuple(r[f] for f in fields) for r in rows]
    built = [tuple(r[f] for f in fields) for r in theirs]
    return list(difflib.unified_diff([" | ".join(r) for r in built], [" | ".join(r) for r in mine],
                                     "ipusim.params() of " + build, "config_reference.py", lineterm=""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("schema", help="configs/schema/experiment.schema.json")
    parser.add_argument("--check", metavar="PAGE", help="compare PAGE with what the schema generates; exit 1 with a diff if they differ")
    parser.add_argument("--compare-build", metavar="BUILD", help="compare the rows with BUILD/python's ipusim.params()")
    args = parser.parse_args()
    rows = params(load(args.schema))
    if args.compare_build:
        diff = compare_build(rows, args.compare_build)
        print("\n".join(diff) if diff else f"{len(rows)} rows, as ipusim.params() of {args.compare_build} gives them")
        return 1 if diff else 0
    text = page(rows) + "\n"
    if args.check:
        try:
            committed = Path(args.check).read_text(encoding="utf-8")
        except OSError as e:
            print(f"{args.check}: {e}", file=sys.stderr)
            return 1
        if committed == text:
            print(f"{args.check}: up to date with {args.schema} ({len(rows)} keys)")
            return 0
        sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), text.splitlines(True), args.check,
                                                   f"generated from {args.schema}"))
        print(f"\n{args.check} differs from what {args.schema} generates: regenerate it with\n"
              f"  python3 tools/docs/config_reference.py {args.schema} > {args.check}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
