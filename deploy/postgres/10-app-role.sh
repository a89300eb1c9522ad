#!/bin/sh
# Run once by the postgres image, on an empty data directory: the role the app connects as.
# It owns nothing (the tables are POSTGRES_USER's, who migrates): it cannot TRUNCATE a table
# nor disable a trigger. `manage.py grant_app_role` (compose's `migrate`) grants it the rows.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v role="$APP_DB_USER" -v password="$APP_DB_PASSWORD" <<'SQL'
CREATE ROLE :"role" LOGIN PASSWORD :'password';
SQL
