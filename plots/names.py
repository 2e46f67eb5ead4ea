"""Words for what the figures and the report show: engines, CC methods, settings and their
values ('Zen / Cicada', 'Long transactions: scans'), never the spec's snake_case or JSON."""

ENGINES = {"mmdb": "MMDB", "wbl": "WBL", "foedus": "FOEDUS", "zen": "Zen", "nvmvcc": "NVMVCC",
           "nvcaracal": "NVCaracal"}
CCS = {"no_wait": "NO_WAIT", "wait_die": "WAIT_DIE", "dl_detect": "DL_DETECT", "occ": "OCC",
       "silo": "Silo", "tictoc": "TicToc", "hstore": "H-Store", "mvcc": "MVCC",
       "hekaton": "Hekaton", "cicada": "Cicada", "mcsi": "MCSI", "pgsi": "PGSI",
       "foedus": "FOEDUS", "caracal": "Caracal"}

SETTINGS = {"threads": "Threads", "read_ratio": "Read ratio", "theta": "Zipf θ",
            "p_ratio": "P (NVM / DRAM)", "read_ns": "NVM read latency (ns per 256 B)",
            "write_gbps": "NVM write bandwidth (GB/s)", "profile": "Device profile",
            "persist_domain": "Persistence domain", "cc": "Concurrency control",
            "engine": "Engine", "system": "Engine / CC", "epoch_txns": "Epoch size (transactions)",
            "group_commit_us": "Group-commit interval (µs)",
            "txns": "Transactions per thread before the crash", "rows": "Rows",
            "warehouses": "Warehouses", "accounts": "Accounts", "long_txn": "Long transactions",
            "tpcc_mix": "TPC-C mix", "mix": "Mix", "numa": "NUMA placement",
            "adaptive": "Execution mode", "allocator": "Allocator", "contention": "Contention"}
# Values worth words of their own, by setting.
VALUES = {"long_txn": {"scan": "scans", "update": "updates", "none": "none"},
          "persist_domain": {"adr": "ADR", "eadr": "eADR"}}


def bare(setting):
    """'config.theta' -> 'theta': the setting a table column holds."""
    return str(setting).split(".", 1)[1] if "." in str(setting) else str(setting)


def setting(name):
    """An axis label or panel heading: the known words, else 'long_txn_rows' -> 'Long txn rows'."""
    name = bare(name)
    return SETTINGS.get(name) or name.replace("_", " ").capitalize()


def system(name):
    """'zen/cicada' -> 'Zen / Cicada', 'no_wait' -> 'NO_WAIT'; a name with any part that is
    neither an engine nor a CC method (a spec's label, 'Zen+ adaptive') stays as it is."""
    parts = str(name).split("/")
    words = [ENGINES.get(p) or CCS.get(p) for p in parts]
    return " / ".join(words) if all(words) else str(name)


def value(v, name=None):
    """A setting's value in words: engines and CC methods by name, known values by word,
    whole floats without '.0', an axis value's label with what it sets."""
    name = bare(name) if name else None
    if isinstance(v, dict):  # an axis value: a label and/or an engine/CC pair, and settings
        pair = system(f"{v['engine']}/{v['cc']}") if "engine" in v and "cc" in v else None
        rest = [f"{k} {value(x)}" for k, x in v.items() if k not in ("label", "engine", "cc")]
        head = str(v["label"]) if "label" in v else pair
        details = ([pair] if "label" in v and pair else []) + rest
        if head is None:
            return ", ".join(details)
        return head + (f" ({', '.join(details)})" if details else "")
    if isinstance(v, list):
        return ", ".join(value(x, name) for x in v)
    if isinstance(v, float):  # 4.0 -> '4', never 2.68435e+08
        return str(int(v)) if v.is_integer() else str(v)
    if name in ("engine", "cc", "system"):
        return system(v)
    return VALUES.get(name, {}).get(str(v), str(v))
