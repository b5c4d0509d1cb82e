"""Authentication and authorization: node keys, agent tokens, permissions, approvals, audit."""
