#!/bin/sh
# Entry point of the briefd image: git credentials for a git source, from files (secrets)
# rather than from the environment or the URL, then `briefd "$@"`.
#   GIT_TOKEN_FILE   (default /run/secrets/git_token): an HTTPS token, given to git by a
#                    credential helper that reads the file each time; user GIT_TOKEN_USER
#                    (default x-access-token, as GitHub wants; GitLab: oauth2); only to the
#                    host of BRIEFD_SOURCE (its scheme, host and port), or of GIT_TOKEN_URL
#                    when set (a source in briefd.yaml, or an ssh source with https code.repos)
#   GIT_SSH_KEY_FILE (default /run/secrets/git_ssh_key): a deploy key for ssh:// and git@ URLs;
#   GIT_KNOWN_HOSTS_FILE (default /run/secrets/git_known_hosts): pinned host keys; without it
#                    the first key seen is trusted and kept in /data/.ssh/known_hosts
set -eu

# Whether a secret file is there; one this user cannot read stops the container with the fix
# (a file secret of compose is the host's file, with its owner and mode: a deploy key is 600)
present() {
    [ -e "$1" ] || return 1
    [ -r "$1" ] && return 0
    echo "error: $1 is there but uid $(id -u) cannot read it (owner uid $(stat -c %u "$1")," \
        "mode $(stat -c %a "$1")); on the host, make the file mounted there readable by" \
        "uid $(id -u): sudo chown $(id -u) <file>, or chmod 644 <file>" >&2
    exit 1
}

# scheme://host[:port] of an http(s) URL, without a user name, path, query or fragment (what
# git's credential.<url>.* matches); nothing for any other URL (ssh, git@host:path, a folder)
origin_of() {
    case "$1" in
        http://* | https://*) ;;
        *) return 0 ;;
    esac
    rest=${1#*://}
    host=${rest%%[/?#]*}
    printf '%s://%s' "${1%%://*}" "${host##*@}" | tr '[:upper:]' '[:lower:]'
}

token_file=${GIT_TOKEN_FILE:-/run/secrets/git_token}
if present "$token_file"; then
    token_url=${GIT_TOKEN_URL:-${BRIEFD_SOURCE:-}}
    origin=$(origin_of "$token_url")
    if [ -z "$origin" ]; then
        echo "error: $token_file is there but no https host to give it to: BRIEFD_SOURCE" \
            "is '${BRIEFD_SOURCE:-}' (unset, or no http(s) URL); set GIT_TOKEN_URL to the" \
            "https://host the token is for (e.g. https://github.com), or remove the secret" >&2
        exit 1
    fi
    # credential.<origin>.helper: git asks it for that host only, never for one a redirect,
    # a submodule or a code.repos URL names; after the GIT_CONFIG_* entries already given
    # (the README's safe.directory for a mounted checkout), which it must not replace
    n=${GIT_CONFIG_COUNT:-0}
    case $n in '' | *[!0-9]*) n=0 ;; esac
    export "GIT_CONFIG_KEY_$n=credential.$origin.helper"
    export "GIT_CONFIG_VALUE_$n=!f() { test \"\$1\" = get || exit 0; echo username=${GIT_TOKEN_USER:-x-access-token}; printf 'password=%s\\n' \"\$(cat '$token_file')\"; }; f"
    export GIT_CONFIG_COUNT=$((n + 1))
fi

key_file=${GIT_SSH_KEY_FILE:-/run/secrets/git_ssh_key}
if present "$key_file"; then
    # ssh refuses a key others may read: use a private copy (never on the volume)
    key=$(mktemp /tmp/briefd-deploy-key.XXXXXX)
    cat "$key_file" >"$key"
    chmod 600 "$key"
    known=${GIT_KNOWN_HOSTS_FILE:-/run/secrets/git_known_hosts}
    if present "$known"; then
        check="-o StrictHostKeyChecking=yes -o UserKnownHostsFile=$known"
    else
        mkdir -p "$HOME/.ssh"
        check="-o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=$HOME/.ssh/known_hosts"
    fi
    export GIT_SSH_COMMAND="ssh -i $key -o IdentitiesOnly=yes -o BatchMode=yes $check"
fi

exec briefd "$@"
