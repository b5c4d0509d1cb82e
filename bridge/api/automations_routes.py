"""``/v1/automations``: create, list, enable, disable, test and delete rules; their last runs.

Every route needs a valid token; what it may see and change is the runner's rule
(``bridge.automations``): creating needs ``automations:create``, a rule is seen by its
creator and by ``automations:read``/``automations:manage``, changed by its creator and
by ``automations:manage``. Details: docs/automations.md.
"""

from __future__ import annotations

from aiohttp import web

from bridge.api.bearer import token_of
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route, path_param
from bridge.automations import AutomationRunner, SwitchBindings, parse_pair, rule_schema
from bridge.errors import InvalidRequestError, running


def _runner(request: web.Request) -> AutomationRunner:
    return running(service_of(request).automations, "automations")


async def list_rules(request: web.Request) -> web.Response:
    """List the rules the caller may see."""
    return json_response({"rules": _runner(request).rules(token_of(request))})


async def create_rule(request: web.Request) -> web.Response:
    """Create a rule from a JSON document (the rule schema)."""
    body = await read_json(request)
    rule = await _runner(request).create(token_of(request), body)
    return json_response(rule, status=201)


async def get_rule(request: web.Request) -> web.Response:
    """Return one rule with its last runs."""
    runner, token, rule_id = _runner(request), token_of(request), request.match_info["rule_id"]
    return json_response({**runner.get(token, rule_id), "runs": runner.runs(token, rule_id)})


async def change_rule(request: web.Request) -> web.Response:
    """Enable or disable a rule: ``{"enabled": bool}``."""
    body = await read_json(request)
    if (
        not isinstance(body, dict)
        or set(body) != {"enabled"}
        or not isinstance(body["enabled"], bool)
    ):
        raise InvalidRequestError('body is {"enabled": true|false}')
    rule = _runner(request).set_enabled(
        token_of(request), request.match_info["rule_id"], body["enabled"]
    )
    return json_response(rule)


async def test_rule(request: web.Request) -> web.Response:
    """Say whether the rule would act now (conditions, status); act on nothing."""
    return json_response(
        await _runner(request).test(token_of(request), request.match_info["rule_id"])
    )


async def delete_rule(request: web.Request) -> web.Response:
    """Delete a rule and revoke its token."""
    return json_response(_runner(request).delete(token_of(request), request.match_info["rule_id"]))


def _bindings(request: web.Request) -> SwitchBindings:
    return running(_runner(request).bindings, "Matter bindings")


async def list_bindings(request: web.Request) -> web.Response:
    """List the switch -> light bindings whose devices the caller may read."""
    token = token_of(request)
    return json_response({"bindings": _bindings(request).list(token)})


async def create_binding(request: web.Request) -> web.Response:
    """Bind a switch to a light on the devices: ``{"switch": id, "light": id}``."""
    token = token_of(request)
    switch, light = parse_pair(await read_json(request))
    made = await _bindings(request).create(token, switch, light)
    return json_response(made, status=201 if made["status"] == "active" else 202)


async def delete_binding(request: web.Request) -> web.Response:
    """Remove a switch -> light binding from the devices."""
    token = token_of(request)
    switch, light = parse_pair(
        {"switch": request.match_info["switch"], "light": request.match_info["light"]}
    )
    return json_response(await _bindings(request).delete(token, switch, light))


async def presence(request: web.Request) -> web.Response:
    """Return who is home: each configured person the caller may read (presence:read)."""
    return json_response(_runner(request).presence(token_of(request)))


async def report_presence(request: web.Request) -> web.Response:
    """Report that a person is home or away: ``{"home": bool}`` (presence:report:<person>)."""
    body = await read_json(request)  # checked against the route's declared body
    return json_response(
        _runner(request).report_presence(
            token_of(request), request.match_info["person"], body["home"]
        )
    )


async def schema(request: web.Request) -> web.Response:
    """Return the rule JSON Schema."""
    token_of(request)
    return json_response(rule_schema())


def setup(app: web.Application) -> None:
    """Add the automation routes."""
    rule = path_param("rule_id", "the rule's id")
    add_route(
        app,
        "GET",
        "/v1/automations",
        list_rules,
        operation_id="listAutomations",
        summary="List the rules the caller may see",
        tags=["automations"],
    )
    add_route(
        app,
        "POST",
        "/v1/automations",
        create_rule,
        operation_id="createAutomation",
        summary="Create a rule (needs automations:create; runs with its own token, a "
        "subset of the caller's)",
        tags=["automations"],
        permission="automations:create",
        responses={
            "201": "the rule",
            "400": "INVALID_PARAMS",
            "403": "PERMISSION_DENIED",
            "409": "CONFLICT",
        },
    )
    add_route(
        app,
        "GET",
        "/v1/automations/schema",
        schema,
        operation_id="automationSchema",
        summary="The rule JSON Schema",
        tags=["automations"],
    )
    add_route(
        app,
        "GET",
        "/v1/automations/presence",
        presence,
        operation_id="presence",
        summary="Who is home: each configured person the caller may read",
        tags=["automations"],
    )
    add_route(
        app,
        "PUT",
        "/v1/automations/presence/{person}",
        report_presence,
        operation_id="reportPresence",
        summary="Report that a person is home or away (needs presence:report:<person>)",
        tags=["automations"],
        parameters=[path_param("person", "a configured person")],
        request_body={
            "type": "object",
            "required": ["home"],
            "additionalProperties": False,
            "properties": {"home": {"type": "boolean"}},
        },
        responses={"200": "{person, home, since}", "403": "PERMISSION_DENIED", "404": "NOT_FOUND"},
    )
    pair = {
        "type": "object",
        "required": ["switch", "light"],
        "additionalProperties": False,
        "properties": {
            "switch": {"type": "string", "minLength": 1, "maxLength": 64},
            "light": {"type": "string", "minLength": 1, "maxLength": 64},
        },
    }
    add_route(
        app,
        "GET",
        "/v1/automations/bindings",
        list_bindings,
        operation_id="listBindings",
        summary="Matter bindings (a switch sending OnOff to a light by itself) the caller may see",
        tags=["automations"],
    )
    add_route(
        app,
        "POST",
        "/v1/automations/bindings",
        create_binding,
        operation_id="createBinding",
        summary="Bind a switch to a light on the devices (automations:create and "
        "device:control on both; a lock or door waits for approval)",
        tags=["automations"],
        permission="automations:create",
        request_body=pair,
        responses={
            "201": "the binding, written and read back",
            "202": "awaiting a person's approval",
            "400": "INVALID_PARAMS",
            "403": "PERMISSION_DENIED",
            "409": "CONFLICT",
        },
    )
    add_route(
        app,
        "DELETE",
        "/v1/automations/bindings/{switch}/{light}",
        delete_binding,
        operation_id="deleteBinding",
        summary="Remove a binding and the light's grant to the switch",
        tags=["automations"],
        permission="automations:create",
        parameters=[
            path_param("switch", "the switch's device id"),
            path_param("light", "the light's device id"),
        ],
    )
    add_route(
        app,
        "GET",
        "/v1/automations/{rule_id}",
        get_rule,
        operation_id="getAutomation",
        summary="One rule and its last runs",
        tags=["automations"],
        parameters=[rule],
    )
    add_route(
        app,
        "PATCH",
        "/v1/automations/{rule_id}",
        change_rule,
        operation_id="changeAutomation",
        summary="Enable or disable a rule",
        tags=["automations"],
        parameters=[rule],
        request_body={
            "type": "object",
            "required": ["enabled"],
            "additionalProperties": False,
            "properties": {"enabled": {"type": "boolean"}},
        },
    )
    add_route(
        app,
        "POST",
        "/v1/automations/{rule_id}/test",
        test_rule,
        operation_id="testAutomation",
        summary="Would the rule act now? (conditions, status; nothing is acted on)",
        tags=["automations"],
        parameters=[rule],
    )
    add_route(
        app,
        "DELETE",
        "/v1/automations/{rule_id}",
        delete_rule,
        operation_id="deleteAutomation",
        summary="Delete a rule and revoke its token",
        tags=["automations"],
        parameters=[rule],
    )
