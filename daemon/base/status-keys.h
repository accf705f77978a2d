/* SPDX-License-Identifier: MIT */
/* The keys of the status result ({"cmd":"status"}, cachectl status --json)
 * and of the trim result, spelled once for both ends: the daemon writes
 * each object with these and cachectl reads it with them (the table, check,
 * metrics, trim's report), so that a key cannot be misspelled on one side
 * only. Values (a state "over_cap", a level "critical") are not keys.
 *
 * One macro per key of each object, named for the object: STATUS_CACHE_*
 * are the keys of an element of "caches", STATUS_SCAN_* of its "scan", ...
 * The same word in two objects (a cache's and a share's "size_bytes") has a
 * macro in each, as each object's writer has its own; where one function
 * writes a key into both (the trims' totals, "kinds", "scan"), the second
 * object's macro names the first's. tests/check-status-keys fails on a bare
 * literal of these in cachectl or in the daemon's writers of the status, and
 * status-keys.bats checks that every key cachectl reads is in a real
 * daemon's status. Header only: no code. */
#pragma once

/* The result: {"caches":[...],"volumes":[...],"remotes":[...],"ready":B,"version":S}. */
#define STATUS_CACHES   "caches"
#define STATUS_VOLUMES  "volumes"
#define STATUS_REMOTES  "remotes"
#define STATUS_READY    "ready"         /* every available cache scanned */
#define STATUS_VERSION  "version"       /* the daemon's */

/* The windows of the objects keyed by window ("working_set_bytes",
 * "evicted_keys", ...) and the suffixes of the keys that end in one. */
#define STATUS_WINDOW_1H  "1h"
#define STATUS_WINDOW_24H "24h"
#define STATUS_WINDOW_7D  "7d"
#define STATUS_WINDOW_30D "30d"

/* A cache, an element of "caches". */
#define STATUS_CACHE_NAME               "name"
#define STATUS_CACHE_PATH               "path"
/* The root's "DEV:INO" (decimal st_dev, st_ino), while available: the same
 * cache at another path, a container's bind mount of it, has the same. */
#define STATUS_CACHE_ROOT_ID            "root_id"
#define STATUS_CACHE_STATE              "state"         /* cache_state_name */
#define STATUS_CACHE_REASON             "reason"        /* only while unavailable: why */
#define STATUS_CACHE_SIZE_BYTES         "size_bytes"    /* sum of st_blocks * 512 of the regular files */
#define STATUS_CACHE_FILES              "files"
#define STATUS_CACHE_MAX_SIZE_BYTES     "max_size_bytes"
#define STATUS_CACHE_MAX_SIZE_TEXT      "max_size_text" /* the cap as configured ("5G") */
#define STATUS_CACHE_TRIM_TO            "trim_to"       /* a trim's target, a fraction of the cap */
#define STATUS_CACHE_MODE               "mode"          /* the root's configured mode, "2775" */
#define STATUS_CACHE_MODE_OK            "mode_ok"       /* the root has it */
#define STATUS_CACHE_MOUNT              "mount"         /* its volume's mount point; null while unavailable */
#define STATUS_CACHE_HITS               "hits"          /* ccache's counters */
#define STATUS_CACHE_MISSES             "misses"
#define STATUS_CACHE_HIT_RATE_1H        "hit_rate_" STATUS_WINDOW_1H    /* null without cacheable calls */
#define STATUS_CACHE_HIT_RATE_24H       "hit_rate_" STATUS_WINDOW_24H
#define STATUS_CACHE_HIT_RATE_7D        "hit_rate_" STATUS_WINDOW_7D
#define STATUS_CACHE_WORKING_SET_FILES  "working_set_files"     /* entries used (mtime) by window */
#define STATUS_CACHE_WORKING_SET_BYTES  "working_set_bytes"
#define STATUS_CACHE_WRITERS            "writers"       /* [STATUS_WRITER_*] */
#define STATUS_CACHE_WRITERS_PENDING    "writers_pending"       /* entries whose header is not read yet */
#define STATUS_CACHE_KEY_FAMILIES       "key_families"  /* STATUS_FAMILIES_* */
#define STATUS_CACHE_REGRET             "regret"        /* STATUS_REGRET_* */
#define STATUS_CACHE_CAP_ADVICE         "cap_advice"    /* text; null without advice */
#define STATUS_CACHE_REGRET_ALERT       "regret_alert"  /* the alarms' thresholds, as configured */
#define STATUS_CACHE_SILENT_WINDOW_SECONDS "silent_window_seconds"
#define STATUS_CACHE_SILENT_MIN_CALLS   "silent_min_calls"
#define STATUS_CACHE_SILENT_HIT_RATE    "silent_hit_rate"
#define STATUS_CACHE_IDLE_AFTER_SECONDS "idle_after_seconds"
#define STATUS_CACHE_ALARMS             "alarms"        /* alert kind name: whether it stands */
#define STATUS_CACHE_EVICTED_FILES_TOTAL  "evicted_files_total"        /* by the daemon */
#define STATUS_CACHE_EVICTED_BYTES_TOTAL  "evicted_bytes_total"
#define STATUS_CACHE_STORED_FILES_TOTAL   "stored_files_total"         /* new entries seen */
#define STATUS_CACHE_STORED_BYTES_TOTAL   "stored_bytes_total"
#define STATUS_CACHE_REFRESHED_FILES_TOTAL "refreshed_files_total"     /* entries a hit refreshed */
#define STATUS_CACHE_REMOVED_FILES_TOTAL  "removed_files_total"        /* by others than the daemon */
#define STATUS_CACHE_REMOVED_BYTES_TOTAL  "removed_bytes_total"
/* The rest of the size's changes since the start (activity.h): files that
 * are no entries (ccache's temporaries...), entries with no store, eviction
 * or removal seen; size_bytes = size_base_bytes + stored + adjusted_up +
 * other_added - evicted - removed - adjusted_down - other_removed. */
#define STATUS_CACHE_OTHER_ADDED_BYTES_TOTAL   "other_added_bytes_total"
#define STATUS_CACHE_OTHER_REMOVED_BYTES_TOTAL "other_removed_bytes_total"
#define STATUS_CACHE_ADJUSTED_UP_BYTES_TOTAL   "adjusted_up_bytes_total"
#define STATUS_CACHE_ADJUSTED_DOWN_BYTES_TOTAL "adjusted_down_bytes_total"
#define STATUS_CACHE_SIZE_BASE_BYTES      "size_base_bytes"            /* null until the first scan is over */
#define STATUS_CACHE_TRIM               "trim"          /* only while one runs: STATUS_TRIM_* */
#define STATUS_CACHE_LAST_TRIM          "last_trim"     /* only after one: STATUS_TRIM_* */
#define STATUS_CACHE_MERGE              "merge"         /* FROM's and TO's, while a merge runs: STATUS_MERGE_* */
#define STATUS_CACHE_MODE_REPAIRS       "mode_repairs"
#define STATUS_CACHE_CCACHE_CONF_MAX_SIZE "ccache_conf_max_size"      /* what the daemon wrote; null when it does not */
#define STATUS_CACHE_CCACHE_CLEANUPS_TOTAL "ccache_cleanups_total"   /* ccache's own cleanups seen since the start */
#define STATUS_CACHE_ENTRY_FILES        "entry_files"   /* ccache's entries, not its stats, locks, tmp */
#define STATUS_CACHE_ENTRY_BYTES        "entry_bytes"
#define STATUS_CACHE_OLDEST_ENTRY_MTIME "oldest_entry_mtime"
#define STATUS_CACHE_NEWEST_ENTRY_MTIME "newest_entry_mtime"
#define STATUS_CACHE_KINDS              "kinds"         /* ccache_kind_name: STATUS_KIND_* */
#define STATUS_CACHE_DIRS               "dirs"
#define STATUS_CACHE_SCAN               "scan"          /* STATUS_SCAN_* */
#define STATUS_CACHE_MEMORY_BYTES       "memory_bytes"  /* the daemon's memory for it (account, activity) */
#define STATUS_CACHE_REMOTE_ERRORS      "remote_errors" /* STATUS_REMOTE_ERRORS_* */

/* An element of a cache's "kinds". */
#define STATUS_KIND_FILES "files"
#define STATUS_KIND_BYTES "bytes"

/* A cache's "scan". */
#define STATUS_SCAN_RUNNING             "running"
#define STATUS_SCAN_REASON              "reason"        /* this and the next three only while one runs */
#define STATUS_SCAN_DIRS                "dirs"          /* so far */
#define STATUS_SCAN_FILES               "files"
#define STATUS_SCAN_SECONDS             "seconds"
#define STATUS_SCAN_RESCANS             "rescans"       /* full rescans after the first scan */
#define STATUS_SCAN_LAST                "last"          /* only after a rescan: STATUS_RESCAN_* */
#define STATUS_SCAN_INOTIFY_OVERFLOWS   "inotify_overflows"
#define STATUS_SCAN_FOUND_FILES_TOTAL   "found_files_total"   /* new files scans after the first found: */
#define STATUS_SCAN_FOUND_BYTES_TOTAL   "found_bytes_total"   /* stores the events did not show */
#define STATUS_SCAN_WATCHES             "watches"
#define STATUS_SCAN_MAX_WATCHES         "max_watches"
#define STATUS_SCAN_UNWATCHED_DIRS      "unwatched_dirs"

/* A cache's scan's "last": the last rescan, and what it corrected. */
#define STATUS_RESCAN_REASON  "reason"
#define STATUS_RESCAN_AT      "at"              /* unix seconds */
#define STATUS_RESCAN_SECONDS "seconds"
#define STATUS_RESCAN_ADDED   "added"
#define STATUS_RESCAN_CHANGED "changed"
#define STATUS_RESCAN_REMOVED "removed"

/* A trim: a cache's "trim" and "last_trim", the values of the trim result
 * ({NAME: TRIM, ...}) and of its progress lines. */
#define STATUS_TRIM_REASON              "reason"        /* not in the trim result: STATUS_TRIM_REASON_* */
#define STATUS_TRIM_AT                  "at"            /* last_trim only: unix seconds */
#define STATUS_TRIM_SECONDS             "seconds"       /* last_trim only */
#define STATUS_TRIM_DRY_RUN             "dry_run"
#define STATUS_TRIM_TARGET_BYTES        "target_bytes"
#define STATUS_TRIM_PLANNED_FILES       "planned_files"
#define STATUS_TRIM_PLANNED_BYTES       "planned_bytes"
#define STATUS_TRIM_FILES               "files"         /* evicted (a dry run: would be) */
#define STATUS_TRIM_BYTES               "bytes"
#define STATUS_TRIM_OLDEST_KEPT_MTIME   "oldest_kept_mtime"
#define STATUS_TRIM_INFLIGHT_BYTES      "inflight_bytes"        /* ccache's temporaries in use, never chosen */
#define STATUS_TRIM_SAVED               "saved"         /* planned, kept as used or changed since */
#define STATUS_TRIM_LOCKED_DIRS         "locked_dirs"   /* left, locked by ccache */
#define STATUS_TRIM_ERRORS              "errors"
#define STATUS_TRIM_STATS_UPDATES       "stats_updates" /* ccache's counters put right */
#define STATUS_TRIM_STATS_FAILURES      "stats_failures"
#define STATUS_TRIM_STATS_DEFERRED      "stats_deferred"
#define STATUS_TRIM_LOCKS_BROKEN        "locks_broken"
#define STATUS_TRIM_BEYOND_TABLE_FILES  "beyond_table_files"    /* only when not 0 */
#define STATUS_TRIM_OVER_CAP_AFTER      "over_cap_after"        /* last_trim only */
#define STATUS_TRIM_SIZE_BYTES          "size_bytes"    /* the trim result only: the cache's size after */

/* The values of a trim's "reason" (evict/trim-queue.h: TrimReason). */
#define STATUS_TRIM_REASON_CAP          "cap"           /* the cache went over its max_size */
#define STATUS_TRIM_REASON_MANUAL       "manual"        /* cachectl trim */
#define STATUS_TRIM_REASON_DRY_RUN      "dry-run"       /* cachectl trim --dry-run */
#define STATUS_TRIM_REASON_PRESSURE     "pressure"      /* its volume below min_free */
#define STATUS_TRIM_REASON_MERGE        "merge"         /* room made for a merge */
#define STATUS_TRIM_REASON_WRITTEN_BY   "written-by"    /* cachectl trim --written-by / --namespace */

/* A merge (cachectl merge): the status's "merge" of both caches while it
 * runs (the first six), the merge's progress lines and its result. */
#define STATUS_MERGE_FROM               "from"
#define STATUS_MERGE_INTO               "into"
#define STATUS_MERGE_FILES_DONE         "files_done"    /* entries dealt with (moved, kept, dropped, skipped) */
#define STATUS_MERGE_FILES_TOTAL        "files_total"   /* FROM's entries when the merge began */
#define STATUS_MERGE_BYTES_DONE         "bytes_done"
#define STATUS_MERGE_BYTES_TOTAL        "bytes_total"
#define STATUS_MERGE_PHASE              "phase"         /* "evicting", "moving", "done" */
#define STATUS_MERGE_DRY_RUN            "dry_run"
#define STATUS_MERGE_SAME_FILESYSTEM    "same_filesystem"       /* renames, not copies */
#define STATUS_MERGE_FROM_PATH          "from_path"
#define STATUS_MERGE_INTO_PATH          "into_path"
#define STATUS_MERGE_MOVED              "moved"         /* entries now in TO, bytes below */
#define STATUS_MERGE_MOVED_BYTES        "moved_bytes"
#define STATUS_MERGE_ALREADY            "already_in_into"       /* TO had the name: FROM's copy went */
#define STATUS_MERGE_SKIPPED            "skipped"       /* not as the account said (changed, planted): left */
#define STATUS_MERGE_SPARSE            "sparse"        /* names whose size is beyond their blocks: never copied */
#define STATUS_MERGE_SPARSE_BYTES      "sparse_bytes"  /* their apparent size */
#define STATUS_MERGE_PUT_BACK          "put_back"      /* placed in a directory renamed out of TO: taken back */
#define STATUS_MERGE_GONE               "gone"          /* evicted or removed before their turn */
#define STATUS_MERGE_ERRORS             "errors"
#define STATUS_MERGE_LEFT               "left_in_from"  /* FROM's entries at the end */
#define STATUS_MERGE_EVICT_INTO_FILES   "evict_into_files"      /* TO's coldest, for the cap */
#define STATUS_MERGE_EVICT_INTO_BYTES   "evict_into_bytes"
#define STATUS_MERGE_DROP_FROM_FILES    "drop_from_files"       /* FROM's coldest, not moved */
#define STATUS_MERGE_DROP_FROM_BYTES    "drop_from_bytes"
#define STATUS_MERGE_INTO_SIZE_BYTES    "into_size_bytes"       /* TO's size (a dry run: now) */
#define STATUS_MERGE_INTO_MAX_SIZE_BYTES "into_max_size_bytes"
#define STATUS_MERGE_ESTIMATE_SECONDS   "estimate_seconds"      /* a dry run: how long at the rate below */
#define STATUS_MERGE_RATE_MEASURED      "rate_measured"         /* the rate is a past merge's, not the default */
#define STATUS_MERGE_SECONDS            "seconds"
#define STATUS_MERGE_STOPPED            "stopped"       /* why it ended early; absent when it ran to the end */
#define STATUS_MERGE_MIXED              "mixed_families"        /* FROM's key scheme is not TO's */
#define STATUS_MERGE_MIXED_FILES        "mixed_files"           /* FROM's entries no writer of TO hits */
#define STATUS_MERGE_MIXED_BYTES        "mixed_bytes"

/* A cache's "regret": stores of entries the daemon had evicted. */
#define STATUS_REGRET_STORES_24H "stores_" STATUS_WINDOW_24H
#define STATUS_REGRET_STORES_7D  "stores_" STATUS_WINDOW_7D
#define STATUS_REGRET_BYTES_24H  "bytes_" STATUS_WINDOW_24H
#define STATUS_REGRET_BYTES_7D   "bytes_" STATUS_WINDOW_7D
#define STATUS_REGRET_SHARE_7D   "share_" STATUS_WINDOW_7D     /* of all stores; null without any */
#define STATUS_REGRET_SUGGESTED_MAX_SIZE_BYTES "suggested_max_size_bytes"     /* null without regret */
#define STATUS_REGRET_REMEMBERED_EVICTIONS "remembered_evictions"

/* An element of a cache's "writers": one ccache version and namespace. */
#define STATUS_WRITER_CCACHE_VERSION "ccache_version"   /* null: no header that names one */
#define STATUS_WRITER_NAMESPACE      "namespace"
#define STATUS_WRITER_HEADER         "header"           /* only without a version: why */
#define STATUS_WRITER_ENTRIES        "entries"
#define STATUS_WRITER_BYTES          "bytes"
#define STATUS_WRITER_STORES_24H     "stores_" STATUS_WINDOW_24H
#define STATUS_WRITER_HITS_24H       "hits_" STATUS_WINDOW_24H

/* A cache's "key_families", and an element of its "families". */
#define STATUS_FAMILIES_FAMILIES             "families"
#define STATUS_FAMILIES_DUPLICATE_STORES_24H "duplicate_stores_" STATUS_WINDOW_24H
#define STATUS_FAMILIES_MIXED                "mixed"
#define STATUS_FAMILY_FAMILY                 "family"   /* family_name */
#define STATUS_FAMILY_BYTES                  "bytes"
#define STATUS_FAMILY_STORES_24H             "stores_" STATUS_WINDOW_24H

/* A cache's "remote_errors": ccache's remote storage errors. */
#define STATUS_REMOTE_ERRORS_WINDOW_SECONDS "window_seconds"
#define STATUS_REMOTE_ERRORS_ERRORS         "errors"    /* in the window */
#define STATUS_REMOTE_ERRORS_ALERT          "alert"     /* boolean: remote-errors stands */

/* A volume, an element of "volumes". */
#define STATUS_VOLUME_MOUNT              "mount"
#define STATUS_VOLUME_TOTAL_BYTES        "total_bytes"
#define STATUS_VOLUME_AVAIL_BYTES        "avail_bytes"  /* to unprivileged users */
#define STATUS_VOLUME_FREE_BYTES         "free_bytes"
#define STATUS_VOLUME_TOTAL_INODES       "total_inodes"
#define STATUS_VOLUME_AVAIL_INODES       "avail_inodes"
#define STATUS_VOLUME_ALERT              "alert"        /* volume_level_name: the worse of the two below */
#define STATUS_VOLUME_BYTES_LEVEL        "bytes_level"
#define STATUS_VOLUME_INODES_LEVEL       "inodes_level"
#define STATUS_VOLUME_WARN_FREE_BYTES    "warn_free_bytes"
#define STATUS_VOLUME_CRIT_FREE_BYTES    "crit_free_bytes"
#define STATUS_VOLUME_MIN_FREE_BYTES     "min_free_bytes"       /* null when not set */
#define STATUS_VOLUME_WARN_FREE_INODES   "warn_free_inodes"
#define STATUS_VOLUME_CRIT_FREE_INODES   "crit_free_inodes"
#define STATUS_VOLUME_FULL_WITHIN_SECONDS "full_within_seconds" /* null when off */
#define STATUS_VOLUME_FULL_IN_SECONDS    "full_in_seconds"      /* the estimate; null when not filling */
#define STATUS_VOLUME_FULL_SOON          "full_soon"
#define STATUS_VOLUME_PRESSURE           "pressure"     /* below min_free */
#define STATUS_VOLUME_PRESSURE_CACHES_EMPTY "pressure_caches_empty"    /* and nothing left to evict */
#define STATUS_VOLUME_CACHES             "caches"       /* the names of the caches on it */

/* A remote, an element of "remotes", of either kind. */
#define STATUS_REMOTE_NAME       "name"
#define STATUS_REMOTE_URL        "url"
#define STATUS_REMOTE_KIND       "kind"                 /* "redis" or "file" */
#define STATUS_REMOTE_STATE      "state"                /* a share's: cache_state_name */
#define STATUS_REMOTE_LEVEL      "level"
#define STATUS_REMOTE_ALERTS     "alerts"               /* the alert kinds that stand */
#define STATUS_REMOTE_LAST_ERROR "last_error"

/* A redis remote's own keys; those from used_memory_bytes on only once a
 * poll succeeded. */
#define STATUS_REDIS_REACHABLE             "reachable"  /* null before the first poll */
#define STATUS_REDIS_LAST_OK               "last_ok"    /* unix seconds; null before one */
#define STATUS_REDIS_FIGURES_AGE_SECONDS   "figures_age_seconds"
#define STATUS_REDIS_POLL_INTERVAL_SECONDS "poll_interval_seconds"
#define STATUS_REDIS_POLLS_TOTAL           "polls_total"
#define STATUS_REDIS_POLL_FAILURES_TOTAL   "poll_failures_total"
#define STATUS_REDIS_USED_MEMORY_BYTES     "used_memory_bytes"
#define STATUS_REDIS_MAXMEMORY_BYTES       "maxmemory_bytes"
#define STATUS_REDIS_POLICY                "policy"     /* maxmemory-policy; null when refused */
#define STATUS_REDIS_EVICTS                "evicts"     /* whether the policy evicts ccache's keys */
#define STATUS_REDIS_EVICTED_KEYS_TOTAL    "evicted_keys_total"
#define STATUS_REDIS_KEYSPACE_HITS_TOTAL   "keyspace_hits_total"
#define STATUS_REDIS_KEYSPACE_MISSES_TOTAL "keyspace_misses_total"
#define STATUS_REDIS_EVICTED_KEYS          "evicted_keys"       /* by window (1h, 24h) */
#define STATUS_REDIS_KEYSPACE_HITS         "keyspace_hits"
#define STATUS_REDIS_KEYSPACE_MISSES       "keyspace_misses"
#define STATUS_REDIS_CCACHE_KEYS           "ccache_keys"        /* null: the last SCAN stopped short */
#define STATUS_REDIS_SCAN_ERROR            "scan_error"
#define STATUS_REDIS_DB_KEYS               "db_keys"
#define STATUS_REDIS_CONNECTED_CLIENTS     "connected_clients"

/* A file: remote's (a share's) own keys: it is a kept cache. */
#define STATUS_SHARE_LAYOUT              "layout"
#define STATUS_SHARE_PATH                "path"
#define STATUS_SHARE_REASON              "reason"       /* null unless unavailable */
#define STATUS_SHARE_KEPT_BY             "kept_by"      /* another host's keeper: STATUS_KEEPER_*; or null */
#define STATUS_SHARE_MOUNT               "mount"
#define STATUS_SHARE_SIZE_BYTES          "size_bytes"
#define STATUS_SHARE_FILES               "files"
#define STATUS_SHARE_ENTRY_FILES         "entry_files"
#define STATUS_SHARE_ENTRY_BYTES         "entry_bytes"
#define STATUS_SHARE_MAX_SIZE_BYTES      "max_size_bytes"
#define STATUS_SHARE_MAX_SIZE_TEXT       "max_size_text"
#define STATUS_SHARE_TRIM_TO             "trim_to"
#define STATUS_SHARE_WATCH               "watch"        /* "inotify" or "poll" */
#define STATUS_SHARE_WATCH_REASON        "watch_reason"
#define STATUS_SHARE_RESCAN_INTERVAL_SECONDS "rescan_interval_seconds"
#define STATUS_SHARE_CLOCK               "clock"        /* the LRU's clock in use */
#define STATUS_SHARE_CLOCK_CONFIGURED    "clock_configured"
#define STATUS_SHARE_CLOCK_EVIDENCE      "clock_evidence"       /* STATUS_CLOCK_* */
#define STATUS_SHARE_CLOCK_WARNING       "clock_warning"        /* text; null while a clock moves */
#define STATUS_SHARE_OLDEST_ENTRY_TIME   "oldest_entry_time"
#define STATUS_SHARE_NEWEST_ENTRY_TIME   "newest_entry_time"
/* and, written by the cache's own code: */
#define STATUS_SHARE_EVICTED_FILES_TOTAL   STATUS_CACHE_EVICTED_FILES_TOTAL
#define STATUS_SHARE_EVICTED_BYTES_TOTAL   STATUS_CACHE_EVICTED_BYTES_TOTAL
#define STATUS_SHARE_STORED_FILES_TOTAL    STATUS_CACHE_STORED_FILES_TOTAL
#define STATUS_SHARE_STORED_BYTES_TOTAL    STATUS_CACHE_STORED_BYTES_TOTAL
#define STATUS_SHARE_REFRESHED_FILES_TOTAL STATUS_CACHE_REFRESHED_FILES_TOTAL
#define STATUS_SHARE_REMOVED_FILES_TOTAL   STATUS_CACHE_REMOVED_FILES_TOTAL
#define STATUS_SHARE_REMOVED_BYTES_TOTAL   STATUS_CACHE_REMOVED_BYTES_TOTAL
#define STATUS_SHARE_OTHER_ADDED_BYTES_TOTAL   STATUS_CACHE_OTHER_ADDED_BYTES_TOTAL
#define STATUS_SHARE_OTHER_REMOVED_BYTES_TOTAL STATUS_CACHE_OTHER_REMOVED_BYTES_TOTAL
#define STATUS_SHARE_ADJUSTED_UP_BYTES_TOTAL   STATUS_CACHE_ADJUSTED_UP_BYTES_TOTAL
#define STATUS_SHARE_ADJUSTED_DOWN_BYTES_TOTAL STATUS_CACHE_ADJUSTED_DOWN_BYTES_TOTAL
#define STATUS_SHARE_SIZE_BASE_BYTES       STATUS_CACHE_SIZE_BASE_BYTES
#define STATUS_SHARE_TRIM                  STATUS_CACHE_TRIM
#define STATUS_SHARE_LAST_TRIM             STATUS_CACHE_LAST_TRIM
#define STATUS_SHARE_KINDS                 STATUS_CACHE_KINDS
#define STATUS_SHARE_DIRS                  STATUS_CACHE_DIRS
#define STATUS_SHARE_SCAN                  STATUS_CACHE_SCAN
#define STATUS_SHARE_MEMORY_BYTES          STATUS_CACHE_MEMORY_BYTES

/* A share's "kept_by": the keeper on another host. */
#define STATUS_KEEPER_HOST                  "host"
#define STATUS_KEEPER_PID                   "pid"
#define STATUS_KEEPER_HEARTBEAT_AGE_SECONDS "heartbeat_age_seconds"

/* A share's "clock_evidence": why its clock is what it is. */
#define STATUS_CLOCK_SCANNED            "scanned"
#define STATUS_CLOCK_ENTRY_FILES        "entry_files"           /* those its last scan left */
#define STATUS_CLOCK_TOUCHED_FILES      "touched_files"         /* mtime moved by a hit */
#define STATUS_CLOCK_MTIME_MIN_TOUCHED  "mtime_min_touched"
#define STATUS_CLOCK_MTIME_MIN_SHARE    "mtime_min_share"
#define STATUS_CLOCK_READ_FILES         "read_files"            /* atime moved */
#define STATUS_CLOCK_MTIME_REFRESH_SEEN "mtime_refresh_seen"
