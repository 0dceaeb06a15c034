using System;
using System.Globalization;

namespace Arcadia.Backend.Common
{
    /// <summary>
    /// Small helpers shared by the game services.
    /// </summary>
    public static class Extensions
    {
        /// <summary>
        /// Restricts a value to the inclusive range [<paramref name="min"/>, <paramref name="max"/>].
        /// </summary>
        public static int Clamp(this int value, int min, int max)
        {
            if (min > max)
            {
                throw new ArgumentException($"min ({min}) must not exceed max ({max}).");
            }

            return value < min ? min : value > max ? max : value;
        }

        /// <summary>
        /// Formats a timestamp as an ISO 8601 string in UTC, the format the game client expects.
        /// </summary>
        public static string ToIsoString(this DateTime time) =>
            time.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture);

        /// <summary>
        /// Returns the string, or the fallback when it is null or blank.
        /// </summary>
        public static string OrDefault(this string? text, string fallback) =>
            string.IsNullOrWhiteSpace(text) ? fallback : text;
    }
}
