"""REST gateway tests (a package so the tests can import the fixtures' types from conftest)."""
