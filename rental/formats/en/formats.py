# Day before month, month in words: "12/01/2026" reads as 12 January to most of our customers.
# Times carry their zone (the store's, Europe/Paris).
DATE_FORMAT = "j F Y"
TIME_FORMAT = "H:i T"
DATETIME_FORMAT = "j F Y, H:i T"
SHORT_DATE_FORMAT = "j M Y"
SHORT_DATETIME_FORMAT = "j M Y, H:i"
