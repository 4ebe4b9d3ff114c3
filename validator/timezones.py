"""Time-zone names a schedule's `time_zone` may hold.

Azure ML documents the Windows time-zone IDs below (SPEC §7.2: the appendix of "CLI (v2) job
schedule YAML schema", 131 values, the same set as azure-ai-ml's ``TimeZone`` enum), ordered
as Windows orders them, by UTC offset. The SDK itself passes any string through
(``EXP:s_bad_tz`` loads ``America/Los_Angeles``), so IANA names are recognised too: rules
accept them with a warning instead of rejecting them.

IANA names come from :func:`zoneinfo.available_timezones`, asked lazily (only when a name is
not a Windows name) and once per process. Where no time-zone database is installed (no system
zoneinfo, no ``tzdata`` package) the answer is empty and :func:`looks_like_iana` falls back to
the shape of the name, so a missing database never turns a valid name into an error.
"""

from __future__ import annotations

import re
from functools import lru_cache

# The documented values (SPEC §7.2), in Windows' order.
WINDOWS_TIME_ZONES: tuple[str, ...] = (
    "Dateline Standard Time",
    "UTC-11",
    "Aleutian Standard Time",
    "Hawaiian Standard Time",
    "Marquesas Standard Time",
    "Alaskan Standard Time",
    "UTC-09",
    "Pacific Standard Time (Mexico)",
    "UTC-08",
    "Pacific Standard Time",
    "US Mountain Standard Time",
    "Mountain Standard Time (Mexico)",
    "Mountain Standard Time",
    "Central America Standard Time",
    "Central Standard Time",
    "Easter Island Standard Time",
    "Central Standard Time (Mexico)",
    "Canada Central Standard Time",
    "SA Pacific Standard Time",
    "Eastern Standard Time (Mexico)",
    "Eastern Standard Time",
    "Haiti Standard Time",
    "Cuba Standard Time",
    "US Eastern Standard Time",
    "Paraguay Standard Time",
    "Atlantic Standard Time",
    "Venezuela Standard Time",
    "Central Brazilian Standard Time",
    "SA Western Standard Time",
    "Pacific SA Standard Time",
    "Turks And Caicos Standard Time",
    "Newfoundland Standard Time",
    "Tocantins Standard Time",
    "E. South America Standard Time",
    "SA Eastern Standard Time",
    "Argentina Standard Time",
    "Greenland Standard Time",
    "Montevideo Standard Time",
    "Saint Pierre Standard Time",
    "Bahia Standard Time",
    "UTC-02",
    "Mid-Atlantic Standard Time",
    "Azores Standard Time",
    "Cape Verde Standard Time",
    "UTC",
    "Morocco Standard Time",
    "GMT Standard Time",
    "Greenwich Standard Time",
    "W. Europe Standard Time",
    "Central Europe Standard Time",
    "Romance Standard Time",
    "Central European Standard Time",
    "W. Central Africa Standard Time",
    "Namibia Standard Time",
    "Jordan Standard Time",
    "GTB Standard Time",
    "Middle East Standard Time",
    "Egypt Standard Time",
    "E. Europe Standard Time",
    "Syria Standard Time",
    "West Bank Standard Time",
    "South Africa Standard Time",
    "FLE Standard Time",
    "Turkey Standard Time",
    "Israel Standard Time",
    "Kaliningrad Standard Time",
    "Libya Standard Time",
    "Arabic Standard Time",
    "Arab Standard Time",
    "Belarus Standard Time",
    "Russian Standard Time",
    "E. Africa Standard Time",
    "Iran Standard Time",
    "Arabian Standard Time",
    "Astrakhan Standard Time",
    "Azerbaijan Standard Time",
    "Russia Time Zone 3",
    "Mauritius Standard Time",
    "Georgian Standard Time",
    "Caucasus Standard Time",
    "Afghanistan Standard Time",
    "West Asia Standard Time",
    "Ekaterinburg Standard Time",
    "Pakistan Standard Time",
    "India Standard Time",
    "Sri Lanka Standard Time",
    "Nepal Standard Time",
    "Central Asia Standard Time",
    "Bangladesh Standard Time",
    "N. Central Asia Standard Time",
    "Myanmar Standard Time",
    "SE Asia Standard Time",
    "Altai Standard Time",
    "W. Mongolia Standard Time",
    "North Asia Standard Time",
    "Tomsk Standard Time",
    "China Standard Time",
    "North Asia East Standard Time",
    "Singapore Standard Time",
    "W. Australia Standard Time",
    "Taipei Standard Time",
    "Ulaanbaatar Standard Time",
    "North Korea Standard Time",
    "Aus Central W. Standard Time",
    "Transbaikal Standard Time",
    "Tokyo Standard Time",
    "Korea Standard Time",
    "Yakutsk Standard Time",
    "Cen. Australia Standard Time",
    "AUS Central Standard Time",
    "E. Australia Standard Time",
    "AUS Eastern Standard Time",
    "West Pacific Standard Time",
    "Tasmania Standard Time",
    "Vladivostok Standard Time",
    "Lord Howe Standard Time",
    "Bougainville Standard Time",
    "Russia Time Zone 10",
    "Magadan Standard Time",
    "Norfolk Standard Time",
    "Sakhalin Standard Time",
    "Central Pacific Standard Time",
    "Russia Time Zone 11",
    "New Zealand Standard Time",
    "UTC+12",
    "Fiji Standard Time",
    "Kamchatka Standard Time",
    "Chatham Islands Standard Time",
    "Tonga Standard Time",
    "Samoa Standard Time",
    "Line Islands Standard Time",
)

# Windows time-zone IDs that exist in current Windows releases but are not in the list
# Azure ML documents: accepted by the SDK (any string is), not promised by the docs.
OTHER_WINDOWS_TIME_ZONES: tuple[str, ...] = (
    "Yukon Standard Time",
    "Magallanes Standard Time",
    "Sao Tome Standard Time",
    "South Sudan Standard Time",
    "Sudan Standard Time",
    "Volgograd Standard Time",
    "Saratov Standard Time",
    "Qyzylorda Standard Time",
    "Omsk Standard Time",
    "UTC+13",
)

# A representative IANA zone for each Windows name (the CLDR "001" mapping, plus common
# aliases), for hints only: "America/Los_Angeles" -> "Pacific Standard Time".
_WINDOWS_TO_IANA: dict[str, tuple[str, ...]] = {
    "Dateline Standard Time": ("Etc/GMT+12",),
    "UTC-11": ("Etc/GMT+11", "Pacific/Pago_Pago", "Pacific/Niue", "Pacific/Midway"),
    "Aleutian Standard Time": ("America/Adak",),
    "Hawaiian Standard Time": ("Pacific/Honolulu", "US/Hawaii"),
    "Marquesas Standard Time": ("Pacific/Marquesas",),
    "Alaskan Standard Time": ("America/Anchorage", "America/Juneau", "US/Alaska"),
    "UTC-09": ("Etc/GMT+9", "Pacific/Gambier"),
    "Pacific Standard Time (Mexico)": ("America/Tijuana",),
    "UTC-08": ("Etc/GMT+8", "Pacific/Pitcairn"),
    "Pacific Standard Time": ("America/Los_Angeles", "America/Vancouver", "US/Pacific", "PST8PDT"),
    "US Mountain Standard Time": ("America/Phoenix", "US/Arizona", "MST"),
    "Mountain Standard Time (Mexico)": ("America/Mazatlan",),
    "Mountain Standard Time": ("America/Denver", "America/Edmonton", "America/Boise", "US/Mountain",
                               "MST7MDT"),
    "Central America Standard Time": ("America/Guatemala", "America/Costa_Rica", "America/El_Salvador",
                                      "America/Managua", "America/Tegucigalpa"),
    "Central Standard Time": ("America/Chicago", "America/Winnipeg", "US/Central", "CST6CDT"),
    "Easter Island Standard Time": ("Pacific/Easter",),
    "Central Standard Time (Mexico)": ("America/Mexico_City", "America/Monterrey"),
    "Canada Central Standard Time": ("America/Regina",),
    "SA Pacific Standard Time": ("America/Bogota", "America/Lima", "America/Panama", "America/Jamaica",
                                 "EST"),
    "Eastern Standard Time (Mexico)": ("America/Cancun",),
    "Eastern Standard Time": ("America/New_York", "America/Toronto", "America/Detroit", "US/Eastern",
                              "EST5EDT"),
    "Haiti Standard Time": ("America/Port-au-Prince",),
    "Cuba Standard Time": ("America/Havana",),
    "US Eastern Standard Time": ("America/Indianapolis", "America/Indiana/Indianapolis"),
    "Paraguay Standard Time": ("America/Asuncion",),
    "Atlantic Standard Time": ("America/Halifax", "Atlantic/Bermuda"),
    "Venezuela Standard Time": ("America/Caracas",),
    "Central Brazilian Standard Time": ("America/Cuiaba",),
    "SA Western Standard Time": ("America/La_Paz", "America/Manaus", "America/Santo_Domingo",
                                 "America/Puerto_Rico"),
    "Pacific SA Standard Time": ("America/Santiago",),
    "Turks And Caicos Standard Time": ("America/Grand_Turk",),
    "Newfoundland Standard Time": ("America/St_Johns",),
    "Tocantins Standard Time": ("America/Araguaina",),
    "E. South America Standard Time": ("America/Sao_Paulo",),
    "SA Eastern Standard Time": ("America/Cayenne", "America/Fortaleza", "America/Paramaribo"),
    "Argentina Standard Time": ("America/Buenos_Aires", "America/Argentina/Buenos_Aires"),
    "Greenland Standard Time": ("America/Godthab", "America/Nuuk"),
    "Montevideo Standard Time": ("America/Montevideo",),
    "Saint Pierre Standard Time": ("America/Miquelon",),
    "Bahia Standard Time": ("America/Bahia",),
    "UTC-02": ("Etc/GMT+2", "America/Noronha", "Atlantic/South_Georgia"),
    "Azores Standard Time": ("Atlantic/Azores",),
    "Cape Verde Standard Time": ("Atlantic/Cape_Verde",),
    "UTC": ("Etc/UTC", "Etc/GMT", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "GMT", "UCT", "Universal", "Zulu"),
    "Morocco Standard Time": ("Africa/Casablanca", "Africa/El_Aaiun"),
    "GMT Standard Time": ("Europe/London", "Europe/Dublin", "Europe/Lisbon", "Atlantic/Canary",
                          "Atlantic/Madeira", "GB", "WET"),
    "Greenwich Standard Time": ("Atlantic/Reykjavik", "Africa/Abidjan", "Africa/Accra", "Africa/Dakar"),
    "W. Europe Standard Time": ("Europe/Berlin", "Europe/Amsterdam", "Europe/Rome", "Europe/Stockholm",
                                "Europe/Vienna", "Europe/Zurich", "Europe/Oslo", "Europe/Luxembourg",
                                "Europe/Monaco", "Europe/Malta"),
    "Central Europe Standard Time": ("Europe/Budapest", "Europe/Prague", "Europe/Belgrade",
                                     "Europe/Bratislava", "Europe/Ljubljana", "Europe/Tirane"),
    "Romance Standard Time": ("Europe/Paris", "Europe/Brussels", "Europe/Copenhagen", "Europe/Madrid",
                              "CET"),
    "Central European Standard Time": ("Europe/Warsaw", "Europe/Sarajevo", "Europe/Skopje",
                                       "Europe/Zagreb"),
    "W. Central Africa Standard Time": ("Africa/Lagos", "Africa/Algiers", "Africa/Tunis",
                                        "Africa/Kinshasa"),
    "Namibia Standard Time": ("Africa/Windhoek",),
    "Jordan Standard Time": ("Asia/Amman",),
    "GTB Standard Time": ("Europe/Bucharest", "Europe/Athens", "Asia/Nicosia"),
    "Middle East Standard Time": ("Asia/Beirut",),
    "Egypt Standard Time": ("Africa/Cairo",),
    "E. Europe Standard Time": ("Europe/Chisinau",),
    "Syria Standard Time": ("Asia/Damascus",),
    "West Bank Standard Time": ("Asia/Hebron", "Asia/Gaza"),
    "South Africa Standard Time": ("Africa/Johannesburg", "Africa/Maputo", "Africa/Harare"),
    "FLE Standard Time": ("Europe/Kiev", "Europe/Kyiv", "Europe/Helsinki", "Europe/Riga", "Europe/Sofia",
                          "Europe/Tallinn", "Europe/Vilnius", "EET"),
    "Turkey Standard Time": ("Europe/Istanbul", "Asia/Istanbul"),
    "Israel Standard Time": ("Asia/Jerusalem", "Asia/Tel_Aviv", "Israel"),
    "Kaliningrad Standard Time": ("Europe/Kaliningrad",),
    "Libya Standard Time": ("Africa/Tripoli",),
    "Arabic Standard Time": ("Asia/Baghdad",),
    "Arab Standard Time": ("Asia/Riyadh", "Asia/Kuwait", "Asia/Qatar", "Asia/Bahrain", "Asia/Aden"),
    "Belarus Standard Time": ("Europe/Minsk",),
    "Russian Standard Time": ("Europe/Moscow", "Europe/Simferopol"),
    "E. Africa Standard Time": ("Africa/Nairobi", "Africa/Addis_Ababa", "Africa/Dar_es_Salaam",
                                "Africa/Kampala"),
    "Iran Standard Time": ("Asia/Tehran", "Iran"),
    "Arabian Standard Time": ("Asia/Dubai", "Asia/Muscat"),
    "Astrakhan Standard Time": ("Europe/Astrakhan", "Europe/Ulyanovsk"),
    "Azerbaijan Standard Time": ("Asia/Baku",),
    "Russia Time Zone 3": ("Europe/Samara",),
    "Mauritius Standard Time": ("Indian/Mauritius", "Indian/Reunion", "Indian/Mahe"),
    "Georgian Standard Time": ("Asia/Tbilisi",),
    "Caucasus Standard Time": ("Asia/Yerevan",),
    "Afghanistan Standard Time": ("Asia/Kabul",),
    "West Asia Standard Time": ("Asia/Tashkent", "Asia/Samarkand", "Asia/Dushanbe", "Asia/Ashgabat",
                                "Indian/Maldives"),
    "Ekaterinburg Standard Time": ("Asia/Yekaterinburg",),
    "Pakistan Standard Time": ("Asia/Karachi",),
    "India Standard Time": ("Asia/Calcutta", "Asia/Kolkata"),
    "Sri Lanka Standard Time": ("Asia/Colombo",),
    "Nepal Standard Time": ("Asia/Katmandu", "Asia/Kathmandu"),
    "Central Asia Standard Time": ("Asia/Almaty", "Asia/Bishkek"),
    "Bangladesh Standard Time": ("Asia/Dhaka", "Asia/Thimphu"),
    "N. Central Asia Standard Time": ("Asia/Novosibirsk",),
    "Myanmar Standard Time": ("Asia/Rangoon", "Asia/Yangon"),
    "SE Asia Standard Time": ("Asia/Bangkok", "Asia/Jakarta", "Asia/Ho_Chi_Minh", "Asia/Saigon",
                              "Asia/Phnom_Penh", "Asia/Vientiane"),
    "Altai Standard Time": ("Asia/Barnaul",),
    "W. Mongolia Standard Time": ("Asia/Hovd",),
    "North Asia Standard Time": ("Asia/Krasnoyarsk", "Asia/Novokuznetsk"),
    "Tomsk Standard Time": ("Asia/Tomsk",),
    "China Standard Time": ("Asia/Shanghai", "Asia/Hong_Kong", "Asia/Macau", "Asia/Chongqing", "PRC"),
    "North Asia East Standard Time": ("Asia/Irkutsk",),
    "Singapore Standard Time": ("Asia/Singapore", "Asia/Kuala_Lumpur", "Asia/Manila", "Singapore"),
    "W. Australia Standard Time": ("Australia/Perth",),
    "Taipei Standard Time": ("Asia/Taipei", "ROC"),
    "Ulaanbaatar Standard Time": ("Asia/Ulaanbaatar", "Asia/Ulan_Bator"),
    "North Korea Standard Time": ("Asia/Pyongyang",),
    "Aus Central W. Standard Time": ("Australia/Eucla",),
    "Transbaikal Standard Time": ("Asia/Chita",),
    "Tokyo Standard Time": ("Asia/Tokyo", "Japan"),
    "Korea Standard Time": ("Asia/Seoul", "ROK"),
    "Yakutsk Standard Time": ("Asia/Yakutsk",),
    "Cen. Australia Standard Time": ("Australia/Adelaide", "Australia/Broken_Hill"),
    "AUS Central Standard Time": ("Australia/Darwin",),
    "E. Australia Standard Time": ("Australia/Brisbane", "Australia/Lindeman"),
    "AUS Eastern Standard Time": ("Australia/Sydney", "Australia/Melbourne", "Australia/Canberra",
                                  "Australia/ACT", "Australia/NSW", "Australia/Victoria"),
    "West Pacific Standard Time": ("Pacific/Port_Moresby", "Pacific/Guam"),
    "Tasmania Standard Time": ("Australia/Hobart",),
    "Vladivostok Standard Time": ("Asia/Vladivostok",),
    "Lord Howe Standard Time": ("Australia/Lord_Howe",),
    "Bougainville Standard Time": ("Pacific/Bougainville",),
    "Russia Time Zone 10": ("Asia/Srednekolymsk",),
    "Magadan Standard Time": ("Asia/Magadan",),
    "Norfolk Standard Time": ("Pacific/Norfolk",),
    "Sakhalin Standard Time": ("Asia/Sakhalin",),
    "Central Pacific Standard Time": ("Pacific/Guadalcanal", "Pacific/Noumea"),
    "Russia Time Zone 11": ("Asia/Kamchatka", "Asia/Anadyr"),
    "New Zealand Standard Time": ("Pacific/Auckland", "NZ"),
    "UTC+12": ("Etc/GMT-12", "Pacific/Tarawa", "Pacific/Majuro"),
    "Fiji Standard Time": ("Pacific/Fiji",),
    "Chatham Islands Standard Time": ("Pacific/Chatham",),
    "Tonga Standard Time": ("Pacific/Tongatapu",),
    "Samoa Standard Time": ("Pacific/Apia",),
    "Line Islands Standard Time": ("Pacific/Kiritimati",),
}
IANA_TO_WINDOWS: dict[str, str] = {
    iana.lower(): windows for windows, zones in _WINDOWS_TO_IANA.items() for iana in zones
}

# Abbreviations people write for a zone; none of them is a name Azure ML documents.
ABBREVIATIONS: dict[str, str] = {
    "PST": "Pacific Standard Time", "PDT": "Pacific Standard Time", "PT": "Pacific Standard Time",
    "MST": "Mountain Standard Time", "MDT": "Mountain Standard Time", "MT": "Mountain Standard Time",
    "CST": "Central Standard Time", "CDT": "Central Standard Time", "CT": "Central Standard Time",
    "EST": "Eastern Standard Time", "EDT": "Eastern Standard Time", "ET": "Eastern Standard Time",
    "AKST": "Alaskan Standard Time", "HST": "Hawaiian Standard Time",
    "GMT": "GMT Standard Time", "BST": "GMT Standard Time", "WET": "GMT Standard Time",
    "CET": "W. Europe Standard Time", "CEST": "W. Europe Standard Time",
    "EET": "FLE Standard Time", "EEST": "FLE Standard Time", "MSK": "Russian Standard Time",
    "IST": "India Standard Time", "JST": "Tokyo Standard Time", "KST": "Korea Standard Time",
    "SGT": "Singapore Standard Time", "AEST": "AUS Eastern Standard Time",
    "AEDT": "AUS Eastern Standard Time", "AWST": "W. Australia Standard Time",
    "NZST": "New Zealand Standard Time", "NZDT": "New Zealand Standard Time", "Z": "UTC",
}

_DOCUMENTED = frozenset(WINDOWS_TIME_ZONES)
_BY_LOWER = {name.lower(): name for name in WINDOWS_TIME_ZONES}
_OTHER_BY_LOWER = {name.lower(): name for name in OTHER_WINDOWS_TIME_ZONES}

_IANA_AREAS = ("Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Brazil",
               "Canada", "Chile", "Etc", "Europe", "Indian", "Mexico", "Pacific", "US")
_IANA_SHAPE = re.compile(r"^(?:" + "|".join(_IANA_AREAS) + r")(?:/[A-Za-z][A-Za-z0-9_+\-]*){1,2}$")
_IANA_SINGLETONS = frozenset({
    "UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu", "EST", "MST", "HST",
    "EST5EDT", "CST6CDT", "MST7MDT", "PST8PDT", "CET", "EET", "MET", "WET",
})


def is_documented(name: str) -> bool:
    """An exact documented Windows name."""
    return name in _DOCUMENTED


def windows_spelling(name: str) -> str | None:
    """The documented or other Windows name ``name`` spells with another letter case or
    stray spaces ("pacific standard time"), or ``None``."""
    key = " ".join(name.split()).lower()
    return _BY_LOWER.get(key) or _OTHER_BY_LOWER.get(key)


def is_other_windows(name: str) -> bool:
    """A real Windows time-zone ID that Azure ML's list does not include."""
    return name in OTHER_WINDOWS_TIME_ZONES


@lru_cache(maxsize=1)
def iana_names() -> frozenset[str]:
    """Every IANA key the installed time-zone database knows; empty when there is none."""
    try:
        import zoneinfo

        return frozenset(zoneinfo.available_timezones())
    except (ImportError, OSError, ValueError):  # no module or unreadable database: use the shape
        return frozenset()


def looks_like_iana(name: str) -> bool:
    """``name`` is an IANA time-zone key: from the installed database when there is one,
    otherwise from its shape (``Area/Location``, or one of the few single-word keys)."""
    known = iana_names()
    if known:
        return name in known
    return name in _IANA_SINGLETONS or bool(_IANA_SHAPE.match(name))


def windows_for_iana(name: str) -> str | None:
    """The documented Windows name for an IANA zone, where amllab knows it."""
    return IANA_TO_WINDOWS.get(name.lower())


__all__ = ["ABBREVIATIONS", "IANA_TO_WINDOWS", "OTHER_WINDOWS_TIME_ZONES", "WINDOWS_TIME_ZONES",
           "iana_names", "is_documented", "is_other_windows", "looks_like_iana", "windows_for_iana",
           "windows_spelling"]
