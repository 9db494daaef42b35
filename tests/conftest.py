"""Shared fixtures live in tests/fixtures/; each area owns its own module there."""

pytest_plugins = ["tests.fixtures.repos", "tests.fixtures.models", "tests.fixtures.servers"]
