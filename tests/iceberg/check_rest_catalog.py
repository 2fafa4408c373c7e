"""Reads the Iceberg table a running sluice cluster commits through the
supervisor's read-only Iceberg REST catalog, with pyiceberg's RestCatalog,
and compares it with what pyiceberg's SqlCatalog reads from the metadata
store (iceberg_cluster_test.cc writes EXPECTED):

  check_rest_catalog.py REST_URI TOKEN STORE EXPECTED.json

STORE as for check_cluster_table.py (a SQLite file or a SQLAlchemy URL).

- RestCatalog(uri=REST_URI, token=TOKEN) lists the namespace and the table,
  loads it at the metadata location the SQL catalog has, and a full scan
  reads every row: as many as the SqlCatalog scan and the native segments;
- creating a table or a namespace, and a commit (a property change), fail
  with the catalog's read-only message, and the table is unchanged;
- without a token, or with a wrong one, the catalog refuses (401).

Exits non-zero with the first mismatch.
"""
import json
import sys

from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import ForbiddenError, UnauthorizedError
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, StringType


def check(what, got, want):
    if got != want:
        sys.exit(f"check_rest_catalog: {what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def refused(what, action, error, text):
    try:
        action()
    except error as e:
        check(f"{what} refused ({error.__name__}) saying {text!r}", text in str(e), True)
        print(f"    {e}")
        return
    sys.exit(f"check_rest_catalog: {what}: not refused")


def main(rest_uri, token, store, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)
    props = expected["catalog_properties"]
    name = expected["table"]
    rest = RestCatalog("sluice", uri=rest_uri, token=token, **props)
    check("namespaces", [tuple(n) for n in rest.list_namespaces()], [("sluice",)])
    check("namespace exists", rest.namespace_exists("sluice"), True)
    check("tables", [tuple(t) for t in rest.list_tables("sluice")], [("sluice", name)])
    check("table exists", rest.table_exists(f"sluice.{name}"), True)
    check("a missing table does not", rest.table_exists("sluice.no_such_table"), False)

    uri = store if "://" in store else f"sqlite:///{store}"
    sql = SqlCatalog("sluice", uri=uri, warehouse=expected["warehouse"], **props)
    sql_table = sql.load_table(f"sluice.{name}")
    table = rest.load_table(f"sluice.{name}")
    check("metadata location = the SQL catalog's", table.metadata_location,
          sql_table.metadata_location)
    check("current snapshot = the SQL catalog's", table.metadata.current_snapshot_id,
          sql_table.metadata.current_snapshot_id)
    arrow = table.scan().to_arrow()
    sql_rows = sql_table.scan().to_arrow().num_rows
    check("rows through the REST catalog = through the SQL catalog", arrow.num_rows, sql_rows)
    check("rows = the native segments' rows", arrow.num_rows, expected["rows"])
    check("sum(count) (every record once)", sum(arrow.column("count").to_pylist()),
          expected["records"])

    read_only = "this catalog is read-only"
    schema = Schema(NestedField(1, "a", StringType(), required=False))
    refused("create_table", lambda: rest.create_table("sluice.made_by_rest", schema=schema),
            ForbiddenError, read_only)
    refused("create_namespace", lambda: rest.create_namespace("made_by_rest"), ForbiddenError,
            read_only)

    def commit():
        with table.transaction() as tx:
            tx.set_properties(written_by="rest")
    refused("a commit (set_properties)", commit, ForbiddenError, read_only)
    refused("drop_table", lambda: rest.drop_table(f"sluice.{name}"), ForbiddenError, read_only)
    check("the table is unchanged",
          sql.load_table(f"sluice.{name}").metadata_location, sql_table.metadata_location)
    check("no table was made", [tuple(t) for t in sql.list_tables("sluice")], [("sluice", name)])

    refused("no token", lambda: RestCatalog("sluice", uri=rest_uri, **props).list_namespaces(),
            UnauthorizedError, "NotAuthorizedException")
    refused("a wrong token",
            lambda: RestCatalog("sluice", uri=rest_uri, token="wrong", **props).list_namespaces(),
            UnauthorizedError, "NotAuthorizedException")


if __name__ == "__main__":
    main(*sys.argv[1:5])
