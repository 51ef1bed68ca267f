// The text voice previews speak (GET /v1/voices/{id}/preview).

/** A sample sentence per language family, spoken by voice previews. */
export function sampleSentence(language: string): string {
  const samples: Record<string, string> = {
    en: 'Hello! Thanks for calling. How can I help you today?',
    es: 'Hola, gracias por llamar. ¿En qué puedo ayudarle hoy?',
    de: 'Hallo, danke für Ihren Anruf. Wie kann ich Ihnen heute helfen?',
    fr: "Bonjour, merci de votre appel. Comment puis-je vous aider aujourd'hui ?",
  };
  return samples[language.split('-')[0]] ?? samples.en;
}
