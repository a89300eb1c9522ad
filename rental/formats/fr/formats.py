# Month in words, and times with their zone (the store's, Europe/Paris).
DATE_FORMAT = "j F Y"
TIME_FORMAT = "H:i T"
DATETIME_FORMAT = "j F Y à H:i T"
SHORT_DATE_FORMAT = "j N Y"
SHORT_DATETIME_FORMAT = "j N Y, H:i"
