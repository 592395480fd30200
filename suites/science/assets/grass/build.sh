#!/bin/bash
# Builds the GRASS database of the science suite's GIS tasks from the files
# beside this script: ~/grassdata/science (UTM zone 33N, EPSG:32633) with the
# maps in PERMANENT and an empty mapset "analysis" for the agent's work.
# Usage: bash build.sh [DIR OF INPUTS]; takes about 3 s.
set -euo pipefail
in=${1:-$(dirname "$0")}
db=$HOME/grassdata
export LANG=C.UTF-8
rm -rf "$db/science"
mkdir -p "$db"
grass -c EPSG:32633 -e "$db/science" >/dev/null 2>&1
grass "$db/science/PERMANENT" --exec bash -c '
set -e
in=$1
g.region -s n=5102000 s=5100000 w=600000 e=602000 res=20 --quiet
v.in.ogr -o input="$in/wells.geojson" output=wells --quiet
v.in.ogr -o input="$in/roads.geojson" output=roads --quiet
v.in.ogr -o input="$in/zones.geojson" output=zones --quiet
r.mapcalc --quiet expression="elevation = round(10 * (180 + 0.04 * (x() - 600000) + 0.06 * (y() - 5100000) + 60 * exp(-((x() - 601500)^2 + (y() - 5101600)^2) / 150000.0))) / 10.0"
r.colors --quiet map=elevation color=elevation
' build "$in" >/dev/null 2>&1
mkdir -p "$db/science/analysis"
cp "$db/science/PERMANENT/DEFAULT_WIND" "$db/science/analysis/WIND"
