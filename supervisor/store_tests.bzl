"""A supervisor test that opens metadata stores, run on each backend."""

def store_test(name, srcs, deps = [], tags = [], **kwargs):
    """`name` on SQLite, and `<name minus _test>_postgresql_test` on PostgreSQL.

    The PostgreSQL variant sets SLUICE_TEST_METADATA_STORE=postgresql
    (supervisor/testing/test_store.h): the test process starts its own
    private server on a free loopback port, so variants do not share
    anything and need no `exclusive` tag. Tagged `postgresql`: it needs the
    server from Debian (scripts/install_deps.sh) and fails without it.

    The sources are compiled once, into `<name>_cases` (alwayslink, so
    every TEST in them is kept), and both tests link that library.
    """
    cases = name + "_cases"
    native.cc_library(
        name = cases,
        testonly = True,
        srcs = srcs,
        deps = deps,
        alwayslink = True,
    )
    native.cc_test(name = name, tags = tags, deps = [":" + cases], **kwargs)
    base = name[:-len("_test")] if name.endswith("_test") else name
    native.cc_test(
        name = base + "_postgresql_test",
        env = {"SLUICE_TEST_METADATA_STORE": "postgresql"},
        tags = tags + ["postgresql"],
        deps = [":" + cases],
        **kwargs
    )
