using System;
using System.Security.Cryptography;

namespace Shop.Accounts
{
    public class PasswordHasher
    {
        private const int Iterations = 100000;
        private const int SaltBytes = 16;

        public string Hash(string password)
        {
            byte[] salt = RandomNumberGenerator.GetBytes(SaltBytes);
            byte[] key = Rfc2898DeriveBytes.Pbkdf2(password, salt, Iterations, HashAlgorithmName.SHA256, 32);
            return Iterations + "." + Convert.ToBase64String(salt) + "." + Convert.ToBase64String(key);
        }

        public bool Verify(string password, string stored)
        {
            string[] parts = stored.Split('.');
            int iterations = int.Parse(parts[0]);
            byte[] salt = Convert.FromBase64String(parts[1]);
            byte[] expected = Convert.FromBase64String(parts[2]);
            byte[] actual = Rfc2898DeriveBytes.Pbkdf2(password, salt, iterations, HashAlgorithmName.SHA256, expected.Length);
            return CryptographicOperations.FixedTimeEquals(actual, expected);
        }
    }
}
