"""Reads the Iceberg table a running sluice cluster commits with DuckDB's own
iceberg extension, loaded offline from the pinned duckdb-ext-* wheels
(tests/iceberg/requirements-duckdb-iceberg.txt), and compares it with what
the cluster says natively (iceberg_cluster_test.cc writes EXPECTED):

  check_duckdb_iceberg.py REST_URI TOKEN EXPECTED.json

- iceberg_scan() of the table's current metadata document (its location as
  the supervisor's REST catalog gives it) has the native segments' rows, and
  sum(count) and sum(added) are what was produced;
- the same through the REST catalog: ATTACH ... (TYPE iceberg, ENDPOINT
  REST_URI) with the bearer token, then SELECT from sluice.<table>.

Exits non-zero with the first mismatch.
"""
import json
import pathlib
import sys
import sysconfig
import urllib.request

import duckdb


def check(what, got, want):
    if got != want:
        sys.exit(f"check_duckdb_iceberg: {what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def sql_string(s):
    return "'" + s.replace("'", "''") + "'"


def main(rest_uri, token, expected_path):
    with open(expected_path) as f:
        expected = json.load(f)
    name = expected["table"]
    request = urllib.request.Request(f"{rest_uri}/v1/namespaces/sluice/tables/{name}",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        location = json.load(response)["metadata-location"]

    extensions = (pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions" /
                  f"v{duckdb.__version__}" / "linux_amd64")
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    for extension in ("httpfs", "avro", "iceberg"):
        con.sql(f"LOAD {sql_string(str(extensions / (extension + '.duckdb_extension')))}")
    props = expected["catalog_properties"]
    if "s3.endpoint" in props:
        endpoint = props["s3.endpoint"]
        con.sql(f"""CREATE SECRET s3 (TYPE s3, KEY_ID {sql_string(props['s3.access-key-id'])},
                    SECRET {sql_string(props['s3.secret-access-key'])},
                    REGION {sql_string(props['s3.region'])},
                    ENDPOINT {sql_string(endpoint.split('://', 1)[1])},
                    URL_STYLE 'path', USE_SSL {str(endpoint.startswith('https')).lower()})""")
    want = (expected["rows"], expected["records"], expected["added"])
    check("iceberg_scan(metadata location): count(*), sum(count), sum(added)",
          con.sql(f"""SELECT count(*), sum("count"), sum(added)
                      FROM iceberg_scan({sql_string(location)})""").fetchall()[0], want)

    con.sql(f"CREATE SECRET rest (TYPE iceberg, TOKEN {sql_string(token)})")
    con.sql(f"""ATTACH 'sluice' AS rest (TYPE iceberg, SECRET rest,
                ENDPOINT {sql_string(rest_uri)})""")
    check("through the REST catalog: count(*), sum(count), sum(added)",
          con.sql(f"""SELECT count(*), sum("count"), sum(added)
                      FROM rest.sluice.{name}""").fetchall()[0], want)


if __name__ == "__main__":
    main(*sys.argv[1:4])
