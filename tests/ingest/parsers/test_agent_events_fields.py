"""The agent-event format's fields against the events columns they fill."""

from ingest.parsers.agent_events_fields import EVENT_COLUMNS, FIELDS, JsonType
from warehouse.schema.events import CONTRACT_COLUMNS

# The SQL type a column of each JSON type is stored as.
STORED_AS = {
    JsonType.STRING: "VARCHAR",
    JsonType.INTEGER: "BIGINT",
    JsonType.NUMBER: "DOUBLE",
    JsonType.BOOLEAN: "BOOLEAN",
    JsonType.OBJECT: "VARCHAR",  # attrs, kept as its JSON text
    JsonType.TIME: "TIMESTAMPTZ",
}


def test_each_field_fills_a_contract_column_of_its_type_and_every_column_is_filled() -> None:
    types = {column.name: column.sql_type for column in CONTRACT_COLUMNS}
    filled = {
        field.column or field.path: field for field in FIELDS if field.column or field.path == "ts"
    }
    assert {name: STORED_AS[field.kind] for name, field in filled.items()} == types
    assert EVENT_COLUMNS == tuple(types)


def test_the_required_fields_are_the_columns_that_must_not_be_null() -> None:
    required = {field.column or field.path for field in FIELDS if field.required}
    assert required == {column.name for column in CONTRACT_COLUMNS if column.required}
