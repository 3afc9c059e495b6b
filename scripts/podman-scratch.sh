# Sourced: podman_scratch DIR — podman for one script, configured entirely from files in DIR (runc, cgroupfs, vfs
# storage, no default ulimits, networks and volumes kept there too), as it runs on machines like CI's; nothing on the
# machine changes. Exports CONTAINERS_CONF and CONTAINERS_STORAGE_CONF.
podman_scratch() {
    local dir=$1
    mkdir -p "$dir"
    cat >"$dir/containers.conf" <<CONF
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$dir/tmp"
volume_path = "$dir/volumes"
[network]
network_config_dir = "$dir/networks"
CONF
    cat >"$dir/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$dir/root"
runroot = "$dir/run"
CONF
    export CONTAINERS_CONF=$dir/containers.conf CONTAINERS_STORAGE_CONF=$dir/storage.conf
}
