"""The checked-in JSON Schemas equal what the pydantic models generate."""

from traceconv import schemas


def test_schema_files_are_current():
    expected = schemas.generated()
    stale = [name for name, data in expected.items()
             if not (schemas.SCHEMA_DIR / name).is_file()
             or (schemas.SCHEMA_DIR / name).read_bytes() != data]
    assert not stale, f"regenerate with `python -m traceconv.schemas`: {stale}"
