#!/bin/sh
# Entry point of the briefd image: git credentials for a git source, from files (secrets)
# rather than from the environment or the URL, then `briefd "$@"`.
#   GIT_TOKEN_FILE   (default /run/secrets/git_token): an HTTPS token, given to git by a
#                    credential helper that reads the file each time; user GIT_TOKEN_USER
#                    (default x-access-token, as GitHub wants; GitLab: oauth2)
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

token_file=${GIT_TOKEN_FILE:-/run/secrets/git_token}
if present "$token_file"; then
    export GIT_CONFIG_COUNT=1
    export GIT_CONFIG_KEY_0=credential.helper
    export GIT_CONFIG_VALUE_0="!f() { test \"\$1\" = get || exit 0; echo username=${GIT_TOKEN_USER:-x-access-token}; printf 'password=%s\\n' \"\$(cat '$token_file')\"; }; f"
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
