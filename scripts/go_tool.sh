# Sourced by scripts/install_grpcurl.sh: builds a
# Go command-line tool at the version pinned in third_party/<name>/VERSION
# with `go install` from the Go module proxy, into a cache outside the
# repository keyed by version:
#   <cache>/<version>/bin/<name>
# GOPATH, GOMODCACHE and GOCACHE live under the same directory, so nothing
# outside it is touched. Idempotent: once the binary is there and reports the
# pinned version it does nothing and needs no network. No binary is
# committed. Prints the binary's path on its last line. Needs Go 1.25+ (on
# PATH or in /usr/local/go; Debian 12 packages only Go 1.19).
#
#   go_tool_install NAME MODULE/cmd/NAME CACHE VERSION_FLAG REPORTS [GO_INSTALL_FLAGS...]
# REPORTS: what `NAME VERSION_FLAG` must print for the pinned version; the
# literal VERSION in it stands for the version, "vX.Y.Z".

go_tool_install() {
  local name=$1 package=$2 cache=$3 version_flag=$4 reports=$5
  shift 5
  local version
  version=$(tr -d ' \n' < "third_party/$name/VERSION")
  if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "[$name] bad version in third_party/$name/VERSION: '$version'" >&2
    return 1
  fi
  local root="$cache/$version"
  local bin="$root/bin/$name"
  local want=${reports//VERSION/$version}

  if [[ -x "$bin" ]] && "$bin" "$version_flag" 2>&1 | grep -qF "$want"; then
    echo "[$name] $name $version present"
    echo "$bin"
    return 0
  fi

  local go
  go=$(command -v go || true)
  if [[ -z "$go" && -x /usr/local/go/bin/go ]]; then go=/usr/local/go/bin/go; fi
  if [[ -z "$go" ]] || ! "$go" version | grep -qE 'go1\.(2[5-9]|[3-9][0-9])'; then
    echo "[$name] needs Go 1.25 or newer (found: ${go:-none}${go:+, $("$go" version)});" \
         "install it from https://go.dev/dl/ into /usr/local/go" >&2
    return 1
  fi

  echo "[$name] go install $package@$version into $root"
  mkdir -p "$root"
  # -modcacherw: a module cache the user can delete with rm -rf.
  GOPATH="$root/gopath" GOMODCACHE="$root/gopath/pkg/mod" GOCACHE="$root/gocache" \
    GOBIN="$root/bin" GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local \
    "$go" install "${@//VERSION/$version}" "$package@$version"
  if ! "$bin" "$version_flag" 2>&1 | grep -qF "$want"; then
    echo "[$name] $bin does not report version $version" >&2
    return 1
  fi
  echo "[$name] $("$bin" "$version_flag" 2>&1)"
  echo "$bin"
}
