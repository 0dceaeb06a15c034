using System;
using System.Security.Cryptography;

namespace Arcadia.Backend.Auth
{
    /// <summary>
    /// Hashes account passwords with PBKDF2 (SHA-256) and a random per-user salt.
    /// Stored hashes look like <c>v1.{iterations}.{salt}.{key}</c>, all Base64, so the
    /// iteration count can be raised later without breaking existing accounts.
    /// </summary>
    public sealed class PasswordHasher
    {
        private const int SaltSize = 16;
        private const int KeySize = 32;
        private const string FormatVersion = "v1";

        private readonly int _iterations;

        /// <summary>
        /// Creates a hasher.
        /// </summary>
        /// <param name="iterations">PBKDF2 rounds for new hashes; OWASP suggests at least 600,000.</param>
        public PasswordHasher(int iterations = 600_000)
        {
            _iterations = iterations;
        }

        /// <summary>
        /// Hashes a new password: generates a random salt, derives a key with PBKDF2 and
        /// packs version, iteration count, salt and key into one storable string.
        /// </summary>
        public string HashPassword(string password)
        {
            ArgumentException.ThrowIfNullOrEmpty(password);

            var salt = RandomNumberGenerator.GetBytes(SaltSize);
            var key = Rfc2898DeriveBytes.Pbkdf2(password, salt, _iterations, HashAlgorithmName.SHA256, KeySize);

            return $"{FormatVersion}.{_iterations}.{Convert.ToBase64String(salt)}.{Convert.ToBase64String(key)}";
        }

        /// <summary>
        /// Checks a login attempt against a stored hash by re-deriving the key with the stored
        /// salt and iteration count, then comparing in constant time.
        /// </summary>
        /// <returns>True when the password matches.</returns>
        public bool VerifyPassword(string password, string hash)
        {
            var parts = hash.Split('.');
            if (parts.Length != 4 || parts[0] != FormatVersion || !int.TryParse(parts[1], out var iterations))
            {
                return false;
            }

            var salt = Convert.FromBase64String(parts[2]);
            var expected = Convert.FromBase64String(parts[3]);
            var actual = Rfc2898DeriveBytes.Pbkdf2(password, salt, iterations, HashAlgorithmName.SHA256, expected.Length);

            return CryptographicOperations.FixedTimeEquals(actual, expected);
        }

        /// <summary>
        /// True when a stored hash used fewer rounds than this hasher and should be
        /// re-hashed after the next successful login.
        /// </summary>
        public bool NeedsRehash(string hash)
        {
            var parts = hash.Split('.');
            return parts.Length != 4 || !int.TryParse(parts[1], out var rounds) || rounds < _iterations;
        }
    }
}
