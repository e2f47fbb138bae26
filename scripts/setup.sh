# Shared by scripts/serve.sh and scripts/test.sh (sourced, not run): a .venv for this checkout,
# created on a fresh Debian machine without asking, and apt installs done as root or with sudo.

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
    if [ "$apt_updated" -eq 0 ]; then as_root apt-get update; apt_updated=1; fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"
}

# install_project SPEC: create .venv if absent and pip-install SPEC (e.g. '.' or '-e .[test]') into it.
install_project() {
    if [ ! -x .venv/bin/python ]; then
        # Debian splits venv (and its pip) out of python3.
        python3 -m venv .venv 2>/dev/null || { rm -rf .venv; apt_install python3-venv; python3 -m venv .venv; }
    fi
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@"
}
