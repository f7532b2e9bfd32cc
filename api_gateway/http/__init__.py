"""The gateway's HTTP face: routes (flask-smorest blueprints), their marshmallow schemas, the OpenAPI
document's rules and examples, and the problem types (RFC 9457) every error is answered with. No
hosting and no rules here: a route validates, calls the hosting or the matches, and serializes."""
