"""The protocol documents under docs/protocols/ against what the gateway
really does. No services are started: the documents are compared with
docs/openapi.yaml and with the gateway's ProblemCode
(Sources/Gateway/Problems/ProblemCode.swift), so a change in any one of
them that the others do not follow fails here:

- every problem code (wire code, HTTP status, retryable) of ProblemCode.swift
  is a row of the table in http-error-codes.md, with nothing else there, and
  the statuses agree with the Problem schema's enum and description in
  openapi.yaml;
- every operation (method and path) of openapi.yaml is named in
  apple-iap-protocol.md or user-points-chat-data-protocol.md, and every
  `METHOD /path` the documents name is an operation of openapi.yaml;
- every fenced JSON block in the documents is marked, just before it, with
  what it is: `<!-- response: METHOD PATH STATUS -->`,
  `<!-- request: METHOD PATH -->` or `<!-- not-api: what -->`; responses and
  requests validate against their openapi schema with no undocumented
  members, and problem examples carry the type, title, status and retryable
  ProblemCode.swift gives their code."""
import json
import os
import re

import jsonschema
import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPEC_PATH = os.path.join(ROOT, "docs", "openapi.yaml")
PROBLEM_CODE_SWIFT = os.path.join(ROOT, "Sources", "Gateway", "Problems", "ProblemCode.swift")
ERROR_CODES_DOC = os.path.join(ROOT, "docs", "protocols", "common", "http-error-codes.md")
IAP_DOC = os.path.join(ROOT, "docs", "protocols", "payments", "apple-iap-protocol.md")
POINTS_DOC = os.path.join(ROOT, "docs", "protocols", "common", "user-points-chat-data-protocol.md")
DOCS = [IAP_DOC, ERROR_CODES_DOC, POINTS_DOC]
# The documents that must name every operation between them.
ROUTE_DOCS = [IAP_DOC, POINTS_DOC]
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
PROBLEM_TYPE_PREFIX = "urn:iap-credits:problem:"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def relative(path):
    return os.path.relpath(path, ROOT)


# ---------------------------------------------------------------- ProblemCode.swift

def swift_block(source, header):
    """The body of the `{ ... }` that follows `header`, braces balanced."""
    start = source.find(header)
    assert start >= 0, f"{header!r} not found in ProblemCode.swift"
    open_brace = source.index("{", start + len(header) - 1)
    depth = 0
    for index in range(open_brace, len(source)):
        if source[index] == "{":
            depth += 1
        elif source[index] == "}":
            depth -= 1
            if depth == 0:
                return source[open_brace + 1:index]
    raise AssertionError(f"unbalanced braces after {header!r}")


def swift_switch(block, value_pattern, all_cases):
    """case name -> value for a `switch self { case .a, .b: return X ... }`;
    every case exactly once."""
    block = re.sub(r"//[^\n]*", "", block)
    result = {}
    for names, value in re.findall(r"case\s+((?:\.\w+\s*,\s*)*\.\w+)\s*:\s*return\s+(" + value_pattern + ")", block):
        for name in re.findall(r"\.(\w+)", names):
            assert name not in result, f"case .{name} appears twice in a switch of ProblemCode.swift"
            result[name] = value
    assert "default" not in re.findall(r"\bdefault\b", block), "a ProblemCode switch must list every case (no default)"
    assert set(result) == set(all_cases), f"switch does not cover exactly the enum's cases: {set(all_cases) ^ set(result)}"
    return result


def parse_problem_codes(source):
    """[(case name, raw value, wire code, status, retryable, title)] of the Swift enum."""
    enum_body = swift_block(source, "public enum ProblemCode: String")
    cases = dict(re.findall(r'^\s*case\s+(\w+)\s*=\s*"([A-Z0-9_]+)"', enum_body, re.M))
    assert len(cases) >= 20, f"only {len(cases)} cases parsed from ProblemCode.swift"
    wire_body = swift_block(enum_body, "public var wireCode: String")
    overrides = dict(re.findall(r'self\s*==\s*\.(\w+)\s*\?\s*"([A-Z0-9_]+)"\s*:\s*rawValue', wire_body))
    assert re.sub(r'self\s*==\s*\.(\w+)\s*\?\s*"([A-Z0-9_]+)"\s*:\s*rawValue', "", wire_body).strip() == "", \
        "wireCode is no longer the one-override shape this test reads: update the test"
    statuses = swift_switch(swift_block(enum_body, "public var httpStatus: Int"), r"\d{3}", cases)
    retryables = swift_switch(swift_block(enum_body, "public var retryable: Bool"), r"true|false", cases)
    titles = swift_switch(swift_block(enum_body, "public var title: String"), r'"[^"]*"', cases)
    return [(name, raw, overrides.get(name, raw), int(statuses[name]), retryables[name] == "true", titles[name][1:-1])
            for name, raw in cases.items()]


@pytest.fixture(scope="module")
def problem_codes():
    return parse_problem_codes(read(PROBLEM_CODE_SWIFT))


@pytest.fixture(scope="module")
def spec():
    with open(SPEC_PATH, encoding="utf-8") as f:
        return yaml.safe_load(f)


# ---------------------------------------------------------------- markdown

def markdown_table_rows(text, first_header):
    """The body rows (lists of cells) of every table whose first header cell is `first_header`."""
    rows, in_table, lines = [], False, text.splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith("|"):
            in_table = False
            continue
        cells = [cell.strip() for cell in stripped.strip("|").split("|")]
        if not in_table:
            in_table = cells[0] == first_header and index + 1 < len(lines) and set(lines[index + 1].strip()) <= set("|-: ")
            header_line = index
            continue
        if index == header_line + 1:
            continue  # the |---| line
        rows.append(cells)
    return rows


def error_code_rows():
    """(code, status, retryable) for each row of http-error-codes.md's code tables."""
    rows = []
    for cells in markdown_table_rows(read(ERROR_CODES_DOC), "code"):
        if len(cells) < 3 or not re.fullmatch(r"\d{3}", cells[1]):
            continue  # another table with a "code" column (e.g. the member table)
        code = re.fullmatch(r"`([A-Z0-9_]+)`", cells[0])
        assert code, f"http-error-codes.md: first cell {cells[0]!r} is not a `CODE`"
        assert cells[2] in ("true", "false"), f"http-error-codes.md: {cells[0]} retryable cell {cells[2]!r}"
        rows.append((code.group(1), int(cells[1]), cells[2] == "true"))
    return rows


EXAMPLE_MARKER = re.compile(r"<!--\s*(response|request|not-api):\s*(.*?)\s*-->")


def json_examples(path):
    """[(line number, marker kind, marker text, parsed JSON)] of every ```json block."""
    lines = read(path).splitlines()
    examples = []
    index = 0
    while index < len(lines):
        if lines[index].strip().startswith("```json"):
            start = index
            end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == "```")
            body = "\n".join(lines[start + 1:end])
            before = start - 1
            while before >= 0 and not lines[before].strip():
                before -= 1
            marker = EXAMPLE_MARKER.fullmatch(lines[before].strip()) if before >= 0 else None
            where = f"{relative(path)}:{start + 1}"
            assert marker, f"{where}: a JSON block without a <!-- response|request|not-api: ... --> marker just before it"
            try:
                document = json.loads(body)
            except ValueError as error:
                raise AssertionError(f"{where}: not valid JSON: {error}")
            examples.append((where, marker.group(1), marker.group(2), document))
            index = end + 1
        else:
            index += 1
    return examples


# ---------------------------------------------------------------- openapi

def operation(spec, method, path):
    """(template, operation) for a concrete or template path; path parameters checked against their schema."""
    for template, item in spec["paths"].items():
        names = re.findall(r"\{([^}]+)\}", template)
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "([^/]+)", re.escape(template)) + "$"
        match = re.match(pattern, path)
        if not match or method.lower() not in item:
            continue
        op = item[method.lower()]
        for name, value in zip(names, match.groups()):
            if value == "{" + name + "}":
                continue
            parameter = next(p for p in op.get("parameters", []) if p["name"] == name and p["in"] == "path")
            errors = list(validator(spec, parameter["schema"]).iter_errors(value))
            assert not errors, f"{method} {path}: path parameter {name}={value!r}: {errors[0].message}"
        return template, op
    return None, None


def resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def validator(spec, schema):
    wrapped = dict(schema, components=spec["components"])
    cls = jsonschema.validators.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema"})
    return cls(wrapped, format_checker=jsonschema.FormatChecker())


def undocumented_members(spec, schema, value, where="$"):
    schema = resolve(spec, schema)
    problems = []
    if isinstance(value, dict) and isinstance(schema, dict) and "properties" in schema:
        for key, member in value.items():
            if key not in schema["properties"]:
                problems.append(f"{where}.{key} is not documented")
            else:
                problems += undocumented_members(spec, schema["properties"][key], member, f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema, dict) and "items" in schema:
        for index, item in enumerate(value):
            problems += undocumented_members(spec, schema["items"], item, f"{where}[{index}]")
    return problems


def schema_problems(spec, schema, document):
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in validator(spec, schema).iter_errors(document)]
    return problems + undocumented_members(spec, schema, document)


def openapi_operations(spec):
    return {(method.upper(), template) for template, item in spec["paths"].items() for method in item}


def openapi_code_statuses(spec):
    """wire code -> set of statuses, from the Problem schema's code description."""
    description = spec["components"]["schemas"]["Problem"]["properties"]["code"]["description"]
    statuses = {}
    for code, first, second in re.findall(r"\b([A-Z][A-Z0-9_]+) (\d{3})(?: \([^)]*\))?(?: or (\d{3}))?", description):
        statuses.setdefault(code, set()).update(int(s) for s in (first, second) if s)
    return statuses


# ---------------------------------------------------------------- tests: problem codes

def test_problem_code_swift_parses(problem_codes):
    wire = [row[2] for row in problem_codes]
    assert "VALIDATION_FAILED" in wire and "PAYMENT_GRANT_FAILED" in wire
    # Sanity of the parse against facts the PRD fixes (PRD 6.3).
    table = {(row[2], row[3]): row[4] for row in problem_codes}
    assert table[("PAYMENT_APPLE_UNAVAILABLE", 503)] is True
    assert table[("PAYMENT_STARTER_PACK_INELIGIBLE", 409)] is False


def test_error_code_table_matches_problem_code_swift(problem_codes):
    documented = error_code_rows()
    assert len(documented) == len(set(documented)), "http-error-codes.md lists a row twice"
    expected = {(wire, status, retryable) for _, _, wire, status, retryable, _ in problem_codes}
    missing = expected - set(documented)
    extra = set(documented) - expected
    assert not missing and not extra, (
        "http-error-codes.md disagrees with ProblemCode.swift:\n"
        + "".join(f"  missing or different in the doc: {code} {status} retryable={r}\n" for code, status, r in sorted(missing))
        + "".join(f"  not in ProblemCode.swift: {code} {status} retryable={r}\n" for code, status, r in sorted(extra)))


def test_error_code_table_matches_openapi(spec):
    enum = spec["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
    documented = error_code_rows()
    assert {code for code, _, _ in documented} == set(enum), \
        f"codes differ between http-error-codes.md and openapi.yaml: {set(enum) ^ {c for c, _, _ in documented}}"
    described = openapi_code_statuses(spec)
    assert set(described) == set(enum), f"openapi.yaml's code description misses statuses for {set(enum) - set(described)}"
    for code in enum:
        doc_statuses = {status for c, status, _ in documented if c == code}
        assert doc_statuses == described[code], \
            f"{code}: http-error-codes.md says {sorted(doc_statuses)}, openapi.yaml says {sorted(described[code])}"


def test_openapi_statuses_match_problem_code_swift(spec, problem_codes):
    described = openapi_code_statuses(spec)
    for _, _, wire, status, _, _ in problem_codes:
        assert status in described.get(wire, set()), f"{wire} {status} (ProblemCode.swift) is not in openapi.yaml's description"


# ---------------------------------------------------------------- tests: routes

def test_every_operation_is_documented(spec):
    text = "\n".join(read(path) for path in ROUTE_DOCS)
    missing = [f"{method} {template}" for method, template in sorted(openapi_operations(spec))
               if f"`{method} {template}`" not in text]
    assert not missing, "operations of openapi.yaml no protocol document names (as `METHOD /path`):\n" + "\n".join(missing)


def test_documents_name_only_real_operations(spec):
    operations = openapi_operations(spec)
    for path in DOCS:
        for method, route in re.findall(r"`(" + "|".join(METHODS) + r") (/[^`\s]*)`", read(path)):
            assert (method, route) in operations or operation(spec, method, route)[1] is not None, \
                f"{relative(path)} names `{method} {route}`, which openapi.yaml does not have"


# ---------------------------------------------------------------- tests: examples

def test_every_json_example_is_marked_and_valid(spec, problem_codes):
    by_code_status = {(wire, status): (raw, retryable, title) for _, raw, wire, status, retryable, title in problem_codes}
    problems = []
    responses_seen = set()
    for path in DOCS:
        for where, kind, marker, document in json_examples(path):
            if kind == "not-api":
                continue
            parts = marker.split()
            if kind == "request":
                assert len(parts) == 2 and parts[0] in METHODS, f"{where}: marker must be `request: METHOD PATH`"
                template, op = operation(spec, parts[0], parts[1])
                assert op is not None, f"{where}: {parts[0]} {parts[1]} is not an operation of openapi.yaml"
                schema = op["requestBody"]["content"]["application/json"]["schema"]
                problems += [f"{where}: request {parts[0]} {template}: {p}" for p in schema_problems(spec, schema, document)]
                continue
            assert len(parts) == 3 and parts[0] in METHODS and re.fullmatch(r"\d{3}", parts[2]), \
                f"{where}: marker must be `response: METHOD PATH STATUS`"
            method, concrete, status = parts[0], parts[1], int(parts[2])
            template, op = operation(spec, method, concrete)
            assert op is not None, f"{where}: {method} {concrete} is not an operation of openapi.yaml"
            spec_response = op["responses"].get(str(status)) or op["responses"].get("default")
            assert spec_response is not None, f"{where}: {method} {template} does not document status {status}"
            content = resolve(spec, spec_response).get("content")
            assert content, f"{where}: {method} {template} {status} is documented without a body"
            media_type = "application/problem+json" if 400 <= status else "application/json"
            assert media_type in content, f"{where}: {method} {template} {status} has no {media_type} body"
            schema = content[media_type]["schema"]
            problems += [f"{where}: {method} {template} {status}: {p}" for p in schema_problems(spec, schema, document)]
            responses_seen.add((method, template, status, document.get("status") if status == 200 else None))
            if media_type == "application/problem+json" and isinstance(document, dict):
                code = document.get("code")
                if (code, status) not in by_code_status:
                    problems.append(f"{where}: code {code} is not answered with status {status} (ProblemCode.swift)")
                    continue
                raw, retryable, title = by_code_status[(code, status)]
                expected = {"status": status, "retryable": retryable, "title": title,
                            "type": PROBLEM_TYPE_PREFIX + raw.lower().replace("_", "-")}
                for member, value in expected.items():
                    if document.get(member) != value:
                        problems.append(f"{where}: {code} {status}: {member} is {document.get(member)!r}, the gateway sends {value!r}")
                if document.get("instance") not in (None, concrete):
                    problems.append(f"{where}: instance {document.get('instance')!r} is not the request path {concrete!r}")
    assert not problems, "\n".join(problems)
    # The documents show both 200 shapes of verify and a 200 of every app route with a JSON body.
    verify = "/api/v1/payments/apple/transactions/verify"
    for outcome in ("granted", "already_granted"):
        assert ("POST", verify, 200, outcome) in responses_seen, f"no `{outcome}` example of verify"
    for method, template in openapi_operations(spec):
        ok = resolve(spec, spec["paths"][template][method.lower()]["responses"].get("200", {}))
        if ok.get("content") and template.startswith("/api/"):
            assert any(m == method and t == template and s == 200 for m, t, s, _ in responses_seen), \
                f"no 200 example of {method} {template}"


def test_marker_parser_catches_an_unmarked_block(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text("text\n\n```json\n{}\n```\n")
    with pytest.raises(AssertionError, match="without a"):
        json_examples(str(path))
