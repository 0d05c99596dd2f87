# bash completion for xdnaforge (generated: xdnaforge completion bash)
_xdnaforge() {
    local cur prev task i
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    task=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            -C|--directory) ((i++)) ;;
            -*) ;;
            *) task="${COMP_WORDS[i]}"; break ;;
        esac
    done
    case "$prev" in
        -t|--target)
            COMPREPLY=($(compgen -W "$(xdnaforge __complete targets 2>/dev/null)" -- "$cur"))
            return ;;
        -C|--directory) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    if [[ -z "$task" ]]; then
        COMPREPLY=($(compgen -W "check plan prove survey fetch patch deps env build rebuild-check audit install rollback memlock validate pyxrt doctor compat matrix kernel-check revalidate kernel-hook report publish lava-job lava-results fleet-report ci-workflow track list help completion man" -- "$cur"))
    elif [[ "$task" == completion ]]; then
        COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
    else
        case "$task" in
            check) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
            plan) COMPREPLY=($(compgen -W "--target -t --help" -- "$cur")) ;;
            prove) COMPREPLY=($(compgen -W "--target -t --env-root --env-name --cc --cxx --timeout --help" -- "$cur")) ;;
            survey) COMPREPLY=($(compgen -W "--target -t --env-root --env-name --cc --cxx --help" -- "$cur")) ;;
            fetch) COMPREPLY=($(compgen -W "--target -t --stop-stale --help" -- "$cur")) ;;
            patch) COMPREPLY=($(compgen -W "--target -t --stop-stale --help" -- "$cur")) ;;
            deps) COMPREPLY=($(compgen -W "--target -t --yes --help" -- "$cur")) ;;
            env) COMPREPLY=($(compgen -W "--target -t --refresh --yes --help" -- "$cur")) ;;
            build) COMPREPLY=($(compgen -W "--target -t --stop-stale --help" -- "$cur")) ;;
            rebuild-check) COMPREPLY=($(compgen -W "--target -t --buildinfo --help" -- "$cur")) ;;
            audit) COMPREPLY=($(compgen -W "--target -t --deb --json --help" -- "$cur")) ;;
            install) COMPREPLY=($(compgen -W "--target -t --yes --root --help" -- "$cur")) ;;
            rollback) COMPREPLY=($(compgen -W "--target -t --yes --root --help" -- "$cur")) ;;
            memlock) COMPREPLY=($(compgen -W "--yes --root --help" -- "$cur")) ;;
            validate) COMPREPLY=($(compgen -W "--target -t --help" -- "$cur")) ;;
            pyxrt) COMPREPLY=($(compgen -W "--target -t --python --source --yes --help" -- "$cur")) ;;
            doctor) COMPREPLY=($(compgen -W "--target -t --log --json --help" -- "$cur")) ;;
            compat) COMPREPLY=($(compgen -W "--target -t --facts --json --help" -- "$cur")) ;;
            matrix) COMPREPLY=($(compgen -W "--matrix --stop-stale --help" -- "$cur")) ;;
            kernel-check) COMPREPLY=($(compgen -W "--kernel --help" -- "$cur")) ;;
            revalidate) COMPREPLY=($(compgen -W "--kernel --root-validate --help" -- "$cur")) ;;
            kernel-hook) COMPREPLY=($(compgen -W "--install --yes --root --help" -- "$cur")) ;;
            report) COMPREPLY=($(compgen -W "--target -t --help" -- "$cur")) ;;
            publish) COMPREPLY=($(compgen -W "--target -t --snapshot --help" -- "$cur")) ;;
            lava-job) COMPREPLY=($(compgen -W "--target -t --device-type --help" -- "$cur")) ;;
            lava-results) COMPREPLY=($(compgen -W "--host --help" -- "$cur")) ;;
            fleet-report) COMPREPLY=($(compgen -W "--from --help" -- "$cur")) ;;
            ci-workflow) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
            track) COMPREPLY=($(compgen -W "--line --branch --tag --commit --check --from --help" -- "$cur")) ;;
        esac
    fi
}
complete -o default -F _xdnaforge xdnaforge
