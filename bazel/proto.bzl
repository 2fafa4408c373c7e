"""Protobuf + gRPC C++ code generation with Debian's protoc and grpc_cpp_plugin.

One macro for the whole project. It runs protoc once per library (a genrule),
then wraps the generated sources in a cc_library that links the system
protobuf and gRPC libraries (@system//:protobuf, @system//:grpc).

The generated messages are alwayslink: every program is linked statically
(.bazelrc), and a file whose descriptors are only looked up by name (a
service's methods, for its roles table) would otherwise be left out of the
generated pool.
"""

def _stem(path):
    if not path.endswith(".proto"):
        fail("expected a .proto file, got " + path)
    return path[:-len(".proto")]

def cc_grpc_library(
        name,
        srcs = [],
        system_srcs = [],
        system_root = "/usr/share/grpc-proto",
        deps = [],
        grpc = True,
        headers_only = False,
        link_deps = [],
        visibility = None):
    """Generates C++ (and gRPC) code for a set of .proto files.

    Args:
      name: the cc_library to create.
      srcs: .proto files in this package. Their import paths are relative to
        the package, e.g. "sluice/v1/spec.proto" in //proto is imported as
        "sluice/v1/spec.proto" and included as "sluice/v1/spec.pb.h".
      system_srcs: .proto files relative to `system_root` (installed by a
        Debian package, e.g. grpc-proto's health and reflection protos).
      system_root: import root for system_srcs.
      deps: cc_grpc_library targets whose protos these import.
      grpc: also run grpc_cpp_plugin (for files that define services).
      headers_only: generate headers but compile no sources, because a system
        library already carries the compiled code (gRPC's reflection library).
      link_deps: extra libraries to link (with headers_only, the one that has
        the compiled code).
      visibility: as usual.
    """
    if srcs and system_srcs:
        fail("use either srcs or system_srcs in one cc_grpc_library")
    protos = srcs + system_srcs
    stems = [_stem(p) for p in protos]
    message_hdrs = [s + ".pb.h" for s in stems]
    message_srcs = [s + ".pb.cc" for s in stems]
    service_hdrs = [s + ".grpc.pb.h" for s in stems] if grpc else []
    service_srcs = [s + ".grpc.pb.cc" for s in stems] if grpc else []
    hdrs = message_hdrs + service_hdrs
    cc_srcs = message_srcs + service_srcs

    pkg = native.package_name()
    out_dir = "$(GENDIR)/" + pkg if pkg else "$(GENDIR)"
    grpc_flags = ""
    if grpc:
        grpc_flags = "--grpc_out=%s --plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) " % out_dir
    dep_includes = "-I%s " % (pkg if pkg else ".")
    if system_srcs:
        cmd = ("protoc -I%s --cpp_out=%s %s%s" %
               (system_root, out_dir, grpc_flags, " ".join(system_srcs)))
        gen_srcs = []
    else:
        cmd = ("protoc %s--cpp_out=%s %s$(SRCS)" % (dep_includes, out_dir, grpc_flags))
        gen_srcs = srcs

    native.genrule(
        name = name + "_codegen",
        srcs = gen_srcs,
        outs = hdrs + ([] if headers_only else cc_srcs),
        cmd = cmd,
        message = "protoc " + name,
        visibility = ["//visibility:private"],
    )

    if headers_only or not grpc:
        native.cc_library(
            name = name,
            srcs = [] if headers_only else cc_srcs,
            hdrs = hdrs,
            includes = ["."],
            deps = deps + link_deps + (["@system//:grpc"] if grpc else []) + [
                "@system//:protobuf",
            ],
            alwayslink = True,
            visibility = visibility,
        )
        return

    # The messages alone (NAME_messages): what code that must not depend on
    # gRPC (the core of the task and the supervisor) uses. NAME adds the
    # service stubs and gRPC.
    native.cc_library(
        name = name + "_messages",
        srcs = message_srcs,
        hdrs = message_hdrs,
        includes = ["."],
        deps = [d + "_messages" for d in deps] + ["@system//:protobuf"],
        alwayslink = True,
        visibility = visibility,
    )
    native.cc_library(
        name = name,
        srcs = service_srcs,
        hdrs = service_hdrs,
        includes = ["."],
        deps = deps + link_deps + [
            ":" + name + "_messages",
            "@system//:grpc",
            "@system//:protobuf",
        ],
        visibility = visibility,
    )
