// Colour contrast as WCAG 2.1 computes it, for the colours a user picks (a widget's, a brand's):
// the editors warn when white text on the colour would fall below AA. Plain functions,
// unit-tested on Node.

export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

/** WCAG relative luminance of #rrggbb. */
export function luminance(hex: string): number {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** The contrast ratio of two #rrggbb colours, 1..21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light + 0.05) / (dark + 0.05);
}

/** A warning when white text on `hex` is below AA's 4.5:1, else undefined. */
export function whiteTextWarning(hex: string): string | undefined {
  if (!HEX_COLOR.test(hex)) return undefined;
  const ratio = contrastRatio(hex, '#ffffff');
  return ratio < 4.5 ? `White text on ${hex} has a contrast of ${ratio.toFixed(1)}:1, below the 4.5:1 that WCAG AA asks for: pick a darker colour.` : undefined;
}
