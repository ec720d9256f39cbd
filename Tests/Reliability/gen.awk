# Deterministic test data for the reliability scripts (awk is on every Debian system).
#   awk -v what=fences -v n=100 -f gen.awk                 n circle fences in a grid over [0,1]x[0,1]
#   awk -v what=fixes -v devices=D -v rounds=R -v first=F -v seed=S -f gen.awk
#       a CSV with header: rounds F..F+R-1, one fix per device per round, device times
#       increasing (round*60 + device%60), positions jittered around each device's home
BEGIN {
    if (what == "fences") {
        side = int(sqrt(n)); if (side * side < n) side++
        printf "{\"type\":\"FeatureCollection\",\"features\":[\n"
        for (i = 0; i < n; i++) {
            lon = (i % side + 0.5) / side; lat = (int(i / side) + 0.5) / side
            printf "%s{\"type\":\"Feature\",\"properties\":{\"id\":\"f%d\",\"radius\":%d,\"group\":\"g%d\"},\"geometry\":{\"type\":\"Point\",\"coordinates\":[%.6f,%.6f]}}\n", (i ? "," : ""), i, 40000 / side, i % 7, lon, lat
        }
        printf "]}\n"
        exit
    }
    srand(seed)
    print "device,time,lon,lat"
    for (r = first; r < first + rounds; r++) {
        for (d = 0; d < devices; d++) {
            # A device's home is fixed by its number; each fix lands within 0.04 degrees of it.
            hx = (d * 7919 % 10007) / 10007; hy = (d * 104729 % 10009) / 10009
            printf "v%d,%d,%.6f,%.6f\n", d, r * 60 + d % 60, hx + 0.04 * (rand() - 0.5), hy + 0.04 * (rand() - 0.5)
        }
    }
}
